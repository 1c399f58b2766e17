// The Sentry SDK behind a module of our own, so its chunk has a name the service worker's
// precache can leave out (vite.config.ts): only deployments with SENTRY_DSN download it.
export { captureException, init } from '@sentry/react';
