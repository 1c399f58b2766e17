import './error-page.css';
import { isRouteErrorResponse, useRouteError } from 'react-router-dom';

/** Spec §2/§8: a routing failure shows 'Unexpected Application Error!' with the error text. */
export function RouteError() {
  const error = useRouteError();
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
