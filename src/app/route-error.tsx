import './error-page.css';
import { useEffect } from 'react';
import { isRouteErrorResponse, useRouteError } from 'react-router-dom';
import { reportError } from '../lib/sentry.ts';

/** Spec §2/§8: a routing failure shows 'Unexpected Application Error!' with the error text. */
export function RouteError() {
  const error = useRouteError();
  useEffect(() => {
    // A 4xx route response is the visitor's doing (a bad link), not a fault to report.
    if (!(isRouteErrorResponse(error) && error.status < 500)) reportError(error);
  }, [error]);
  const text = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : String(error);
  return (
    <main className="error-page" id="main">
      <h1>Unexpected Application Error!</h1>
      <pre className="error-text">{text}</pre>
      <a href="/">Go home</a>
    </main>
  );
}
