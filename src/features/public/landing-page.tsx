import { Link } from 'react-router-dom';
import { promptInstall, useInstallAvailable } from '../../lib/install-prompt.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import './public.css';

const FEATURES = [
  { title: 'Upload from anywhere', text: 'Photos and files from your phone, drag and drop on a desktop, paste, or fetch from a URL. Big files resume after a dropped connection.' },
  { title: 'A link for every file', text: 'Each upload gives a short link on its own host. Copy it or send it with your phone’s share sheet.' },
  { title: 'Invite-only', text: 'Members bring people they trust with a few invite keys a week. No ads, no tracking, no IP logs.' },
];

/**
 * Spec §1/§2: a hero with the community channel and the login; issue 11 item 13 adds what Stash
 * does, a picture of the app, registering with an invite and the browser's install offer.
 */
export function LandingPage() {
  const { siteName, communityUrl } = useRuntimeConfig();
  const canInstall = useInstallAvailable();
  return (
    <div className="landing">
      <section className="hero" aria-labelledby="hero-title">
        <div className="hero-text">
          <h1 id="hero-title">{siteName}</h1>
          <p className="hero-lead">A modern, invite-only file hosting platform. Upload from any device, share a link, keep control.</p>
          <div className="hero-actions">
            {/* No COMMUNITY_URL, no button: a greyed one explained only by a tooltip, which a phone never shows, looked broken. */}
            {communityUrl && (
              <a className="btn" href={communityUrl} target="_blank" rel="noopener noreferrer">
                Join the community
              </a>
            )}
            <Link className="btn btn-primary" to="/login">
              Login
            </Link>
          </div>
          <p className="hero-register">
            Got an invite? <Link to="/register">Register with an invite</Link>
          </p>
          {canInstall && (
            <button type="button" className="btn hero-install" onClick={() => void promptInstall()}>
              Install the app
            </button>
          )}
        </div>
        <figure className="hero-shot">
          <picture>
            <source srcSet="/landing/app-dark.jpg" media="(prefers-color-scheme: dark)" />
            <img src="/landing/app-light.jpg" width={390} height={844} fetchPriority="high" alt={`The ${siteName} app on a phone: the uploader with a finished upload, its link, Copy link and Share, and recent uploads with thumbnails.`} />
          </picture>
        </figure>
      </section>
      <section className="features" aria-labelledby="features-title">
        <h2 id="features-title" className="visually-hidden">
          What {siteName} does
        </h2>
        <ul>
          {FEATURES.map((f) => (
            <li key={f.title} className="card">
              <h3>{f.title}</h3>
              <p>{f.text}</p>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
