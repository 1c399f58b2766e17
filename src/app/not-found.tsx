import './error-page.css';
import { Link } from 'react-router-dom';

/** Spec §2: any other path. */
export function NotFound() {
  return (
    <main className="error-page" id="main">
      <h1>Page Not Found</h1>
      <p>The page you are looking for does not exist.</p>
      <Link to="/" className="btn btn-primary">
        Go back home
      </Link>
    </main>
  );
}
