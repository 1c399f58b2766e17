import path from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { VitePWA } from 'vite-plugin-pwa';
import { precompressDir } from './scripts/precompress.mjs';
import { prerenderPublicPages } from './scripts/prerender.mjs';
import { productionBuilds } from './scripts/production-builds.mjs';
import { reactToPreact } from './scripts/react-to-preact.mjs';

/** Design §11: .br and .gz twins of the built text files (scripts/precompress.mjs). */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'stash-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    // After every other plugin (the service worker is written in vite-plugin-pwa's closeBundle).
    closeBundle: {
      order: 'post',
      sequential: true,
      handler() {
        precompressDir(outDir);
      },
    },
  };
}

/** Issue 9: the public pages' markup for the site to serve (scripts/prerender.mjs). */
function prerender(): Plugin {
  let root = '.';
  let outDir = 'dist';
  return {
    name: 'stash-prerender',
    apply: 'build',
    configResolved(config) {
      root = config.root;
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      await prerenderPublicPages(root, outDir);
    },
  };
}

// The API and files hosts come from /config.json at run time (design §2), so nothing
// deployment-specific is baked into the build.
export default defineConfig({
  // React's names on preact/compat, and the production builds of packages whose exports say
  // otherwise (scripts/react-to-preact.mjs and production-builds.mjs say why).
  resolve: { alias: [...reactToPreact, ...productionBuilds] },
  plugins: [
    react(),
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src/sw',
      filename: 'sw.ts',
      registerType: 'prompt',
      // src/lib/pwa.ts registers it with workbox-window (the update prompt waits for uploads).
      injectRegister: false,
      injectManifest: {
        // The app shell, static pages, icons and the decorative pictures (issue 5: offline).
        globPatterns: ['**/*.{js,css,html,svg,png,jpg,jpeg,webp,ico,webmanifest,woff2}'],
        // Sourcemaps are for debugging, not for offline use.
        globIgnores: ['**/*.map'],
        maximumFileSizeToCacheInBytes: 5 * 1024 * 1024,
        // A classic script: module service workers are still missing in some browsers.
        rollupFormat: 'iife',
      },
      // Issue 5: installable, standalone, and a share target for files of any type.
      manifest: {
        id: '/dashboard',
        name: 'Stash',
        short_name: 'Stash',
        description: 'Stash: a modern, invite-only file hosting platform.',
        start_url: '/dashboard',
        scope: '/',
        display: 'standalone',
        theme_color: '#111827',
        background_color: '#111827',
        icons: [
          { src: '/icons/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
          { src: '/icons/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
          { src: '/icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
        share_target: {
          action: '/share-target',
          method: 'POST',
          enctype: 'multipart/form-data',
          params: { files: [{ name: 'file', accept: ['*/*'] }] },
        },
      },
      devOptions: { enabled: false },
    }),
    prerender(),
    precompress(),
  ],
  build: {
    sourcemap: true,
    target: 'es2022',
    rollupOptions: {
      onwarn(warning, warn) {
        // react-router reads React 19's useOptimistic off the namespace and falls back to its own
        // state when preact/compat has none (useOptimisticSafe), so this one is expected.
        if (warning.code === 'IMPORT_IS_UNDEFINED' && warning.message.includes('useOptimistic')) return;
        warn(warning);
      },
    },
  },
  worker: { format: 'es' },
});
