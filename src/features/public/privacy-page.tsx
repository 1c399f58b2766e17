import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import './public.css';

/** Spec §1: the privacy policy's content. */
export function PrivacyPage() {
  const { siteName, contactEmail } = useRuntimeConfig();
  return (
    <article className="prose">
      <h1>Privacy Policy</h1>
      <p>{siteName} keeps as little about you as it can to run the service.</p>
      <h2>What we do not collect</h2>
      <p>We do not log IP addresses.</p>
      <h2>What we store</h2>
      <ul>
        <li>Your username.</li>
        <li>Your password, only as a one-way hash: nobody, including us, can read it back.</li>
        <li>How many files you have uploaded.</li>
        <li>The content of the images and other files you upload.</li>
        <li>When your account was created and other account dates.</li>
      </ul>
      <h2>Your requests</h2>
      <p>If you live in the European Union you may ask us to erase your data. Anyone may report illegal content.</p>
      {contactEmail ? (
        <p>
          Send either request to <a href={`mailto:${contactEmail}`}>{contactEmail}</a> and we will act on it.
        </p>
      ) : (
        <p>Send either request to the operator of this site, who has not published a contact address here yet.</p>
      )}
    </article>
  );
}
