import { useState } from 'react';
import HCaptcha from '@hcaptcha/react-hcaptcha';
import { Turnstile } from '@marsidev/react-turnstile';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';

export type CaptchaType = 'hcaptcha' | 'turnstile';
export interface CaptchaValue {
  token: string | null;
  type: CaptchaType;
}

/** Which providers the deployment offers: design §4 sends a site key only for a provider the server verifies. */
export function useCaptchaProviders(): CaptchaType[] {
  const { hcaptchaSiteKey, turnstileSiteKey } = useRuntimeConfig();
  const list: CaptchaType[] = [];
  if (hcaptchaSiteKey) list.push('hcaptcha'); // spec §1: the first provider is the default
  if (turnstileSiteKey) list.push('turnstile');
  return list;
}

const NAMES: Record<CaptchaType, string> = { hcaptcha: 'hCaptcha', turnstile: 'Cloudflare Turnstile' };

/**
 * The captcha widget with spec §4's provider switch. Nothing renders when no provider is
 * configured; the switch link shows only when both are.
 */
export function CaptchaField({ onChange }: { onChange: (value: CaptchaValue) => void }) {
  const providers = useCaptchaProviders();
  const { hcaptchaSiteKey, turnstileSiteKey } = useRuntimeConfig();
  const [type, setType] = useState<CaptchaType | undefined>(providers[0]);
  if (!type) return null;

  const other = providers.find((p) => p !== type);
  const update = (token: string | null) => onChange({ token, type });

  return (
    <div className="captcha field">
      {type === 'hcaptcha' && hcaptchaSiteKey ? (
        <HCaptcha sitekey={hcaptchaSiteKey} onVerify={(t) => update(t)} onExpire={() => update(null)} onError={() => update(null)} />
      ) : turnstileSiteKey ? (
        <Turnstile siteKey={turnstileSiteKey} onSuccess={(t) => update(t)} onExpire={() => update(null)} onError={() => update(null)} />
      ) : null}
      {other && (
        <button
          type="button"
          className="btn-link captcha-switch"
          onClick={() => {
            setType(other);
            onChange({ token: null, type: other }); // a token from one provider means nothing to the other
          }}
        >
          Having trouble? Use {NAMES[other]} instead
        </button>
      )}
    </div>
  );
}
