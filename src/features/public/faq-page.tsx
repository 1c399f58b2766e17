import { CopyLink } from '../../components/copy-link.tsx';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import './public.css';

/** Spec §1: the FAQ's content (costs in dollars per month). */
export function FaqPage() {
  const { donationWallets } = useRuntimeConfig();
  return (
    <article className="prose">
      <h1>FAQ</h1>
      <h2>How much does it cost to run?</h2>
      <table>
        <caption className="visually-hidden">Monthly running costs in dollars</caption>
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Per month</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>Server</td>
            <td>$110</td>
          </tr>
          <tr>
            <td>Offshore database backups</td>
            <td>$5</td>
          </tr>
          <tr>
            <td>DDoS protection</td>
            <td>$16</td>
          </tr>
          <tr>
            <th scope="row">Total</th>
            <td>
              <strong>$131</strong>
            </td>
          </tr>
        </tbody>
      </table>
      <h2>Is any content off limits?</h2>
      <p>Yes. Illegal material is never allowed, and accounts that upload it are closed.</p>
      <h2>Is the code open source?</h2>
      <p>Not yet.</p>
      <h2>How can I help?</h2>
      {/* Spec §1 "Donation wallets are listed": only the operator's DONATION_WALLETS, never a placeholder. */}
      {donationWallets.length > 0 ? (
        <>
          <p>Donations keep the service running. The operator lists the donation wallets below; please check each address carefully before sending.</p>
          <ul className="wallets">
            {donationWallets.map(({ label, address }, i) => (
              <li key={`${i}-${label}`} className="wallet">
                <span className="wallet-label">{label}</span>
                <code className="wallet-address">{address}</code>
                <CopyLink url={address} asButton>
                  Copy <span className="visually-hidden">{label} address</span>
                </CopyLink>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>Donations keep the service running. No donation wallets are listed yet.</p>
      )}
    </article>
  );
}
