// The site's /config.json (design §2): read once at start, so one build serves every deployment.
import type { DonationWallet, RuntimeConfig } from '../../contract/site.ts';

export type { DonationWallet, RuntimeConfig };

/** Spec §9: 80 MB chunks; used until /config.json says otherwise. */
const DEFAULTS: RuntimeConfig = {
  apiUrl: '',
  filesUrl: '',
  siteName: 'Stash',
  communityUrl: null,
  hcaptchaSiteKey: null,
  turnstileSiteKey: null,
  sentryDsn: null,
  chunkSize: 83_886_080,
  donationWallets: [],
  contactEmail: null,
};

let current: RuntimeConfig = DEFAULTS;

export async function loadRuntimeConfig(): Promise<RuntimeConfig> {
  // The default cache mode, so the preload in index.html is the response used; the server marks
  // the file `no-cache`, so it is still revalidated every time (server/site/site.ts).
  const res = await fetch('/config.json');
  if (!res.ok) throw new Error(`Could not load /config.json (HTTP ${res.status})`);
  setRuntimeConfig((await res.json()) as Partial<RuntimeConfig>);
  return current;
}

/** Used by main.tsx after loading and by tests to stand in for a deployment. */
export function setRuntimeConfig(config: Partial<RuntimeConfig>): void {
  current = { ...DEFAULTS, ...config, donationWallets: walletsFrom(config.donationWallets) };
}

/**
 * A config.json from before wallets existed (the service worker serves the last one offline) has
 * no `donationWallets`; anything that is not a list of label/address strings counts as none.
 */
function walletsFrom(value: unknown): DonationWallet[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (w): w is DonationWallet => typeof w === 'object' && w !== null && typeof w.label === 'string' && typeof w.address === 'string',
  );
}

export function getRuntimeConfig(): RuntimeConfig {
  return current;
}

/**
 * The config never changes after start (main.tsx loads it before the first render), so the hook
 * needs no state; it exists so components read it the React way and tests can swap it.
 */
export function useRuntimeConfig(): RuntimeConfig {
  return current;
}
