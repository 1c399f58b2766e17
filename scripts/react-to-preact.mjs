// Issue 9: React 19 + ReactDOM alone are 58 KiB of brotli, the whole first-load budget of `/`
// (60 KiB). The shipped app runs on preact/compat (about 11 KiB) under React's import names, so
// src/ keeps writing React. One list for the browser build (vite.config.ts) and the public
// pages' prerender (prerender.mjs), so the markup comes from the code the browser runs. Each
// pattern is a whole specifier, so their order does not matter.
export const reactToPreact = [
  { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
  { find: /^react-dom\/server$/, replacement: 'preact/compat/server' },
  { find: /^react-dom\/test-utils$/, replacement: 'preact/test-utils' },
  { find: /^react-dom$/, replacement: 'preact/compat' },
  { find: /^react\/jsx-runtime$/, replacement: 'preact/jsx-runtime' },
  { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/jsx-dev-runtime' },
  { find: /^react$/, replacement: 'preact/compat' },
];
