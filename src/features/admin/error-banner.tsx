import { Banner } from '../../components/banner.tsx';
import { loadFailureText } from '../../lib/use-retry-unreachable.ts';
import { GENERAL_FAILURE } from './admin-types.ts';

/**
 * A screen's load failure. Spec §8: server errors show in a red banner 'Error: ...'. No answer
 * at all is no error of the server's: it says so, and useLoader tries again by itself.
 */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  return <Banner kind="error" text={loadFailureText(error, 'this page', GENERAL_FAILURE)} />;
}
