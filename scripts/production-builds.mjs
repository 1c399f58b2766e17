// Issue 9: packages whose export map hands a bundler a build the site should not ship. One list
// for the browser build (vite.config.ts) and the public pages' prerender (prerender.mjs), so the
// markup comes from the code the browser runs. Each pattern is a whole specifier.
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));

export const productionBuilds = [
  // React Router 7 points every export condition at dist/development (remix-run/react-router
  // #12532, #14102), whose ENABLE_DEV_WARNINGS keeps route checks and their messages in the
  // bundle and runs them on every render; dist/production is the same code with it off. Its
  // files import each other by relative path, so only the two entries the app reaches need
  // pointing (react-router-dom re-exports both).
  { find: /^react-router$/, replacement: path.join(packageDir('react-router'), 'dist/production/index.mjs') },
  { find: /^react-router\/dom$/, replacement: path.join(packageDir('react-router'), 'dist/production/dom-export.mjs') },
  // workbox-window's `module` field is its ES5 build (generators and classes transpiled); the
  // same package's ES2017 build is what every browser able to run a service worker runs.
  { find: /^workbox-window$/, replacement: path.join(packageDir('workbox-window'), 'build/workbox-window.prod.mjs') },
];
