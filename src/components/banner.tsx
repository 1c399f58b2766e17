/**
 * Spec §8: server errors show in a red banner ('Error: ...'); successes in a green one. Errors
 * are announced at once (role alert), successes politely (role status). Renders nothing
 * without text, so callers pass their state as it is.
 */
export function Banner({ kind, text }: { kind: 'error' | 'success'; text: string | null | undefined | false }) {
  if (!text) return null;
  return kind === 'error' ? (
    <p className="banner banner-error" role="alert">
      {text}
    </p>
  ) : (
    <p className="banner banner-success" role="status">
      {text}
    </p>
  );
}
