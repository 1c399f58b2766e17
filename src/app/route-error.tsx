import './error-page.css';
import { useEffect } from 'react';
import { isRouteErrorResponse, useRouteError } from 'react-router-dom';
import { reportError } from '../lib/sentry.ts';

/**
 * A screen's code could not be fetched: offline before the service worker cached it, or a new
 * version replaced the files this page was built with. Chromium, Firefox and Safari word it so;
 * Vite's preloader says "Unable to preload CSS".
 */
export function isCodeLoadFailure(error: unknown): boolean {
  return error instanceof Error && /dynamically imported module|Importing a module script failed|Unable to preload CSS/i.test(error.message);
}

/** Spec §2/§8: a routing failure shows 'Unexpected Application Error!' with the error text. */
export function RouteError() {
  const error = useRouteError();
  const codeMissing = isCodeLoadFailure(error);
  useEffect(() => {
    // A 4xx route response is the visitor's doing (a bad link), and a screen that could not be
    // fetched while offline is the network's: neither is a fault to report.
    if (isRouteErrorResponse(error) && error.status < 500) return;
    if (codeMissing && !navigator.onLine) return;
    reportError(error);
  }, [error, codeMissing]);
  const text = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : String(error);
  return (
    <main className="error-page" id="main">
      <h1>Unexpected Application Error!</h1>
      {codeMissing && (
        <p role="status">
          This screen could not be loaded. Check your connection, then{' '}
          <button type="button" className="btn btn-small" onClick={() => window.location.reload()}>
            Try again
          </button>
        </p>
      )}
      <pre className="error-text">{text}</pre>
      <a href="/">Go home</a>
    </main>
  );
}
