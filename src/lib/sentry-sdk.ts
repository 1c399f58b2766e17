// The two calls the app makes, by name (issue 9): `import('@sentry/react')` as a whole
// namespace kept every export's code in the chunk, session replay among them, 128 KB with
// brotli that every installed app precached; named, the bundler drops what is never called.
export { captureException, init } from '@sentry/react';
