import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import './public.css';

/** Spec §1: the terms of service's content. */
export function TosPage() {
  const { siteName } = useRuntimeConfig();
  return (
    <article className="prose">
      <h1>Terms of Service</h1>
      <p>By using {siteName} you are granted a licence to use the service on these terms.</p>
      <h2>Termination</h2>
      <p>We may terminate your licence if you:</p>
      <ul>
        <li>upload or share illegal content;</li>
        <li>share your account with someone else;</li>
        <li>attempt to hack or disrupt the service;</li>
        <li>send spam;</li>
        <li>use the service for phishing.</li>
      </ul>
      <h2>Changes</h2>
      <p>These terms may change at any time. Continuing to use the service means you accept the terms in force.</p>
      <h2>Access</h2>
      <p>We may revoke access to any account at any time without explanation.</p>
    </article>
  );
}
