import type { RuntimeConfig } from './runtime-config.ts';

/**
 * Error reporting is optional (issue 4): the SDK is only downloaded and started when the
 * deployment set SENTRY_DSN, so a default install sends nothing anywhere.
 */
export async function initSentry(config: RuntimeConfig): Promise<void> {
  if (!config.sentryDsn) return;
  const Sentry = await import('@sentry/react');
  // Spec §9: 100 breadcrumbs, a transport buffer of 30.
  Sentry.init({ dsn: config.sentryDsn, maxBreadcrumbs: 100, transportOptions: { bufferSize: 30 } });
}
