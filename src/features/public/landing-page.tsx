import { Link } from 'react-router-dom';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import './public.css';

/** Spec §1/§2: a hero with exactly two buttons, the community channel and the login. */
export function LandingPage() {
  const { siteName, communityUrl } = useRuntimeConfig();
  return (
    <section className="hero" aria-labelledby="hero-title">
      <h1 id="hero-title">{siteName}</h1>
      <p className="hero-lead">A modern, invite-only file hosting platform. Upload from any device, share a link, keep control.</p>
      <div className="hero-actions">
        {communityUrl ? (
          <a className="btn" href={communityUrl} target="_blank" rel="noopener noreferrer">
            Join the community
          </a>
        ) : (
          // No COMMUNITY_URL configured: keep the hero's shape but say why nothing happens.
          <button type="button" className="btn" disabled title="No community channel is configured">
            Join the community
          </button>
        )}
        <Link className="btn btn-primary" to="/login">
          Login
        </Link>
      </div>
    </section>
  );
}
