import { Outlet } from 'react-router-dom';
import { ConfirmProvider } from '../components/confirm-dialog.tsx';
import { Toasts } from '../components/toasts.tsx';
import { SessionProvider } from '../lib/session.tsx';

/** The root route: providers that need the router (the session navigates on spec §4 failures). */
export function Root() {
  return (
    <SessionProvider>
      <ConfirmProvider>
        <Outlet />
        <Toasts />
      </ConfirmProvider>
    </SessionProvider>
  );
}
