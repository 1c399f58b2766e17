import { useEffect, useState } from 'react';
import type { ResponseOf } from '../../../contract/common.ts';
import type { utilsUserStats } from '../../../contract/utils.ts';
import { call, errorMessage } from '../../lib/api-client.ts';
import { formatBytes } from '../../lib/format.ts';
import { Banner } from '../../components/banner.tsx';

export function UserStatsSection() {
  const [stats, setStats] = useState<ResponseOf<typeof utilsUserStats>['stats'] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    call<typeof utilsUserStats>('/api/v1/utils/userstats', {})
      .then((r) => setStats(r.stats))
      .catch((err: unknown) => setError(`Error: ${errorMessage(err, 'An internal error occurred.')}`));
  }, []);
  return (
    <section className="card" aria-labelledby="stats-title">
      <h2 id="stats-title">Statistics</h2>
      <Banner kind="error" text={error} />
      {stats && (
        <dl className="stats">
          <div>
            <dt>Files uploaded</dt>
            <dd>{stats.totalFilesUploaded.toLocaleString('en-US')}</dd>
          </div>
          <div>
            <dt>Storage used</dt>
            <dd>{formatBytes(stats.totalStorageUsed)}</dd>
          </div>
        </dl>
      )}
    </section>
  );
}
