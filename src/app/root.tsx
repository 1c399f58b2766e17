import { Outlet } from 'react-router-dom';
import { ConfirmProvider } from '../components/confirm-dialog.tsx';
import { Toasts } from '../components/toasts.tsx';
import { SessionProvider } from '../lib/session.tsx';
import { usePageChrome } from './use-page-chrome.ts';

/** The root route: providers that need the router (the session navigates on spec §4 failures). */
export function Root() {
  usePageChrome();
  return (
    <SessionProvider>
      <ConfirmProvider>
        <Outlet />
        <Toasts />
      </ConfirmProvider>
    </SessionProvider>
  );
}
