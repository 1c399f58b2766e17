import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router-dom';
import { router } from './app/router.tsx';
import { loadRuntimeConfig, getRuntimeConfig } from './lib/runtime-config.ts';
import { initSentry } from './lib/sentry.ts';
import './styles/index.css';
import { registerPwa } from './lib/pwa.ts';

const root = createRoot(document.getElementById('root')!);

async function start() {
  try {
    await loadRuntimeConfig();
  } catch (err) {
    // Without /config.json the app cannot know its API host (design §2); say so instead of a blank page.
    console.error(err);
    root.render(
      <main style={{ padding: '2rem', fontFamily: 'system-ui' }}>
        <h1>Stash could not start</h1>
        <p>The site configuration could not be loaded. Check your connection and reload the page.</p>
      </main>,
    );
    return;
  }
  document.title = getRuntimeConfig().siteName;
  registerPwa();
  void initSentry(getRuntimeConfig()).catch((err: unknown) => console.error('Sentry did not start', err));
  root.render(
    <StrictMode>
      <RouterProvider router={router} />
    </StrictMode>,
  );
}

void start();
