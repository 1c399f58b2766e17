import type * as SentrySdkModule from './sentry-sdk.ts';
import type { RuntimeConfig } from './runtime-config.ts';

type SentrySdk = typeof SentrySdkModule;

let sdk: SentrySdk | null = null;
/** Errors seen while the SDK was still downloading: sent once it has started. */
let early: unknown[] | null = [];

/**
 * Error reporting is optional (issue 4): the SDK is only downloaded and started when the
 * deployment set SENTRY_DSN, so a default install sends nothing anywhere.
 */
export async function initSentry(config: RuntimeConfig): Promise<void> {
  if (!config.sentryDsn) {
    early = null;
    return;
  }
  const Sentry = await import('./sentry-sdk.ts');
  // Spec §9: 100 breadcrumbs, a transport buffer of 30.
  Sentry.init({ dsn: config.sentryDsn, maxBreadcrumbs: 100, transportOptions: { bufferSize: 30 } });
  sdk = Sentry;
  for (const error of early ?? []) Sentry.captureException(error);
  early = null;
}

/**
 * Reports an error the app caught itself: the router's error element catches render and
 * loading failures, so they never reach the SDK's global handlers.
 */
export function reportError(error: unknown): void {
  if (sdk) sdk.captureException(error);
  // Bounded like the SDK's own buffer, in case the SDK never arrives (offline, blocked).
  else if (early && early.length < 30) early.push(error);
}
