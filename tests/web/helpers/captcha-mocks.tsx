/** Stand-ins for the captcha widgets: jsdom cannot load the providers' scripts. */
export function FakeHCaptcha({ onVerify }: { onVerify: (token: string) => void }) {
  return (
    <button type="button" onClick={() => onVerify('h-token')}>
      Solve hCaptcha
    </button>
  );
}

export function FakeTurnstile({ onSuccess }: { onSuccess: (token: string) => void }) {
  return (
    <button type="button" onClick={() => onSuccess('t-token')}>
      Solve Turnstile
    </button>
  );
}
