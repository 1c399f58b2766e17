/**
 * What a direct load or reload of a signed-in screen shows while its code arrives (React
 * Router's HydrateFallback: without one the page stayed blank and the router warned on every
 * such load). The spinner fades in late, so a fast connection never sees it flash.
 */
export function AppLoading() {
  return (
    <div className="app-loading" role="status">
      <span className="app-loading-spinner" aria-hidden="true" />
      <span className="visually-hidden">Loading…</span>
    </div>
  );
}
