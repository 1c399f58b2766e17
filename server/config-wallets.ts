import type { DonationWallet } from '../contract/site.ts';

const MAX_WALLETS = 10;
// Printable: no control, format or unassigned characters (Unicode category C); `=` and `;` are the separators.
const WALLET_LABEL = /^[^\p{C}=;]{1,40}$/u;
// Plain addresses and payment URIs (bitcoin:…?amount=…) only: nothing that could break out of markup.
const WALLET_ADDRESS = /^[A-Za-z0-9:?&=._/+-]{1,200}$/;
export const DONATION_WALLETS_FORMAT =
  `up to ${MAX_WALLETS} entries "Label=address" separated by ";" (label 1-40 printable characters without = or ;, ` +
  'address 1-200 characters of A-Z a-z 0-9 : ? & = . _ / + -), e.g. "Bitcoin (BTC)=bc1qexample;Monero (XMR)=4Aexample"';

/**
 * DONATION_WALLETS (spec §1 FAQ): `Label=address;Label=address`. The label ends at the first `=`
 * (labels may not contain one; URI addresses may). Empty entries, as from a trailing `;`, are skipped.
 */
export function parseDonationWallets(raw: string | null): { wallets: DonationWallet[]; errors: string[] } {
  const wallets: DonationWallet[] = [];
  const errors: string[] = [];
  if (raw === null) return { wallets, errors };
  const entries = raw.split(';').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length > MAX_WALLETS) errors.push(`has ${entries.length} entries, at most ${MAX_WALLETS} are allowed`);
  entries.forEach((entry, i) => {
    const where = `entry ${i + 1} (${JSON.stringify(entry.length > 60 ? `${entry.slice(0, 60)}…` : entry)})`;
    const eq = entry.indexOf('=');
    if (eq === -1) {
      errors.push(`${where} has no "=" between label and address`);
      return;
    }
    const label = entry.slice(0, eq).trim();
    const address = entry.slice(eq + 1).trim();
    const before = errors.length;
    if (!WALLET_LABEL.test(label)) {
      errors.push(
        label === ''
          ? `${where} has an empty label`
          : [...label].length > 40
            ? `${where} has a label longer than 40 characters`
            : `${where} has a label with a control or unprintable character`,
      );
    }
    if (!WALLET_ADDRESS.test(address)) {
      errors.push(
        address === ''
          ? `${where} has an empty address`
          : address.length > 200
            ? `${where} has an address longer than 200 characters`
            : `${where} has an address with characters other than A-Z a-z 0-9 : ? & = . _ / + - (spaces and <>"' are not allowed)`,
      );
    }
    if (errors.length === before) wallets.push({ label, address });
  });
  return { wallets, errors };
}
