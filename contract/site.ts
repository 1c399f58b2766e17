/**
 * The site's `/config.json` (design §2): what the web app reads at start, so one build serves
 * every deployment. Served by server/site/site.ts, read by src/lib/runtime-config.ts.
 */
export interface RuntimeConfig {
  apiUrl: string;
  filesUrl: string;
  siteName: string;
  communityUrl: string | null;
  hcaptchaSiteKey: string | null;
  turnstileSiteKey: string | null;
  sentryDsn: string | null;
  chunkSize: number;
  /** Spec §1 "Donation wallets are listed": the operator's DONATION_WALLETS, in their order; [] when unset. */
  donationWallets: DonationWallet[];
  /** Design §11: CONTACT_EMAIL, shown on the privacy page for erasure and abuse requests; null when unset. */
  contactEmail: string | null;
}

export interface DonationWallet {
  label: string;
  address: string;
}
