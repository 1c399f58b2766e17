import { Banner } from '../../components/banner.tsx';

/** Spec §8: server errors show in a red banner 'Error: ...'. */
export function ErrorBanner({ message }: { message: string | null }) {
  return <Banner kind="error" text={message && `Error: ${message}`} />;
}
