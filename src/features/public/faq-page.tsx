import './public.css';

/** Spec §1: the FAQ's content (costs in dollars per month). */
export function FaqPage() {
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
      <p>Donations keep the service running. The operator lists the donation wallets below; please check each address carefully before sending.</p>
      <ul>
        <li>Bitcoin (BTC): ask the operator for the current address</li>
        <li>Monero (XMR): ask the operator for the current address</li>
      </ul>
    </article>
  );
}
