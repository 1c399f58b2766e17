import { useCallback } from 'react';
import { call } from '../../lib/api-client.ts';
import { formatBytes } from '../../lib/format.ts';
import type { adminAllStats } from '../../../contract/admin.ts';
import { ErrorBanner } from './error-banner.tsx';
import { StatsChart } from './stats-chart.tsx';
import { useLoader } from '../../lib/use-loader.ts';

export function SiteStatsSection() {
  const load = useCallback(() => call<typeof adminAllStats>('/api/v1/admin/get/allstats', {}), []);
  const { data, error } = useLoader(load);
  const stats = data?.stats;
  return (
    <section className="card admin-section" aria-labelledby="stats-title">
      <h2 id="stats-title">Site statistics</h2>
      <ErrorBanner error={error} />
      {stats && (
        <>
          <dl className="admin-totals">
            <div>
              <dt>Files uploaded</dt>
              <dd>{stats.totalFilesUploaded}</dd>
            </div>
            <div>
              <dt>Storage used</dt>
              <dd>{formatBytes(stats.totalStorageUsed)}</dd>
            </div>
            <div>
              <dt>Users</dt>
              <dd>{stats.totalUsers}</dd>
            </div>
          </dl>
          <StatsChart stats={stats} />
        </>
      )}
    </section>
  );
}
