import { useEffect, useState } from 'react';
import { loadFailureText, useRetryUnreachable } from '../../lib/use-retry-unreachable.ts';
import type { ResponseOf } from '../../../contract/common.ts';
import type { utilsUserStats } from '../../../contract/utils.ts';
import { call } from '../../lib/api-client.ts';
import { formatBytes } from '../../lib/format.ts';
import { Banner } from '../../components/banner.tsx';

export function UserStatsSection() {
  const [stats, setStats] = useState<ResponseOf<typeof utilsUserStats>['stats'] | null>(null);
  const [error, setError] = useState('');
  const [attempt, setAttempt] = useState(0);
  // No answer (offline, the server unreachable): asked again by itself.
  const retry = useRetryUnreachable(() => setAttempt((n) => n + 1));
  useEffect(() => {
    call<typeof utilsUserStats>('/api/v1/utils/userstats', {})
      .then((r) => {
        setStats(r.stats);
        setError('');
        retry.settled();
      })
      .catch((err: unknown) => {
        setError(loadFailureText(err, 'this section'));
        retry.after(err);
      });
  }, [attempt, retry]);
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
