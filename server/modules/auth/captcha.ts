import type { Config } from '../../config.ts';

export type CaptchaProvider = 'hcaptcha' | 'turnstile';

/** Verifies a captcha answer with its provider (design §4). Off when no provider has a secret. */
export interface CaptchaVerifier {
  /** Providers whose secret is set; empty means captcha is off. */
  enabled(): CaptchaProvider[];
  verify(provider: CaptchaProvider, response: string, remoteIp: string): Promise<boolean>;
}

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<{ ok: boolean; json(): Promise<unknown> }>;

/**
 * hCaptcha and Turnstile share one siteverify shape: a form post of secret, response and
 * remoteip answered with `{ success }`. The verify URLs come from config so tests can point
 * them at a local stand-in of the provider.
 */
export function createCaptchaVerifier(config: Config, fetchImpl: FetchLike = fetch): CaptchaVerifier {
  const providers = config.captcha;
  return {
    enabled() {
      return (['hcaptcha', 'turnstile'] as const).filter((p) => providers[p].secret !== null);
    },
    async verify(provider, response, remoteIp) {
      const p = providers[provider];
      if (!p.secret) return false;
      const form = new URLSearchParams({ secret: p.secret, response, remoteip: remoteIp });
      try {
        const res = await fetchImpl(p.verifyUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
          signal: AbortSignal.timeout(10_000),
        });
        if (!res.ok) return false;
        const body = (await res.json()) as { success?: unknown };
        return body.success === true;
      } catch {
        // A provider that cannot be reached cannot vouch for anyone.
        return false;
      }
    },
  };
}
