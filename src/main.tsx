import { StrictMode } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router-dom';
import { router } from './app/router.tsx';
import { loadRuntimeConfig, getRuntimeConfig } from './lib/runtime-config.ts';
import { initSentry } from './lib/sentry.ts';
import './styles/index.css';
import { registerPwa } from './lib/pwa.ts';

const container = document.getElementById('root')!;
// Issue 9: `/` and the other public pages arrive with their content already in the HTML
// (server/site/prerendered.ts). Taking those nodes over keeps what is painted; a fresh root would
// empty the element first.
const prerendered = container.firstElementChild !== null;

async function start() {
  try {
    await loadRuntimeConfig();
  } catch (err) {
    // Without /config.json the app cannot know its API host (design §2); say so instead of a blank page.
    console.error(err);
    createRoot(container).render(
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
  const app = (
    <StrictMode>
      <RouterProvider router={router} />
    </StrictMode>
  );
  if (prerendered) hydrateRoot(container, app);
  else createRoot(container).render(app);
}

void start();
