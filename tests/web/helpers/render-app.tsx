import { render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { routes } from '../../../src/app/routes.tsx';
import { setRuntimeConfig, type RuntimeConfig } from '../../../src/lib/runtime-config.ts';

export const TEST_CONFIG: Partial<RuntimeConfig> = {
  apiUrl: 'http://api.test',
  filesUrl: 'http://files.test',
  siteName: 'Stash',
};

/** Mounts the real route table in memory at `path`; returns the router to read where the app went. */
export function renderApp(path: string, config: Partial<RuntimeConfig> = {}) {
  setRuntimeConfig({ ...TEST_CONFIG, ...config });
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const view = render(<RouterProvider router={router} />);
  return { router, ...view };
}
