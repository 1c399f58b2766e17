import { useCallback, useRef, useState } from 'react';
import { call, errorMessage } from '../../lib/api-client.ts';
import { formatDate } from '../../lib/format.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { Pagination } from '../../components/pagination.tsx';
import { ResponsiveTable } from '../../components/responsive-table.tsx';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import type { adminInviteLogs, adminRemoveInvite } from '../../../contract/admin.ts';
import { ErrorBanner } from './error-banner.tsx';
import { StateBadge } from '../../components/state-badge.tsx';
import { FilterFold } from '../../components/filter-fold.tsx';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';
import { InviteCreateForm } from './invite-create-form.tsx';
import { useDebounced } from '../../lib/use-debounced.ts';
import { useLoader } from '../../lib/use-loader.ts';
import { usePageInRange } from '../../lib/use-page-in-range.ts';
import { GENERAL_FAILURE, INVITES_PAGE_SIZE, type InviteRow } from './admin-types.ts';

type Claimed = 'all' | 'claimed' | 'unclaimed';

/** /admin/invitelogs (spec §2): filters, 8 per page, create and remove. */
export function InviteLogsPage() {
  const confirm = useConfirm();
  const [text, setText] = useState({ inviteKey: '', createdBy: '', claimedBy: '' });
  const [claimedFilter, setClaimedFilter] = useState<Claimed>('all');
  const [page, setPage] = useState(1);
  const settled = useDebounced(text);

  const load = useCallback(
    () =>
      call<typeof adminInviteLogs>('/api/v1/admin/get/invitelogs', {
        page,
        limit: INVITES_PAGE_SIZE,
        filters: { ...settled, claimedFilter },
      }),
    [page, settled, claimedFilter],
  );
  const { data, error, reload } = useLoader(load);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusAfterRemoval = useFocusAfterRemoval(heading, data);
  const totalPages = data?.totalPages ?? 0;

  usePageInRange(page, totalPages, setPage);

  const setFilter = (name: keyof typeof text, value: string) => {
    setText((t) => ({ ...t, [name]: value }));
    setPage(1);
  };

  const remove = async (invite: InviteRow) => {
    if (!(await confirm(`Remove the invite key ${invite.inviteKey}?`, { confirmLabel: 'Remove', danger: true }))) return;
    try {
      await call<typeof adminRemoveInvite>('/api/v1/admin/set/inviteremove', { inviteKeyId: invite._id });
      notifySuccess('Invite key removed.', { short: true });
      focusAfterRemoval();
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
    reload();
  };

  return (
    <section className="admin-page" aria-labelledby="admin-invites-title">
      <h1 ref={heading} id="admin-invites-title">Invite Logs</h1>
      <InviteCreateForm onCreated={reload} />
      <FilterFold active={Object.values(text).filter(Boolean).length + (claimedFilter === 'all' ? 0 : 1)}>
      <form className="admin-filters" role="search" aria-label="Filter invites" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>Invite key</span>
          <input className="input" type="search" value={text.inviteKey} onChange={(e) => setFilter('inviteKey', e.target.value)} />
        </label>
        <label>
          <span>Created by</span>
          <input className="input" type="search" value={text.createdBy} onChange={(e) => setFilter('createdBy', e.target.value)} />
        </label>
        <label>
          <span>Claimed by</span>
          <input className="input" type="search" value={text.claimedBy} onChange={(e) => setFilter('claimedBy', e.target.value)} />
        </label>
        <label>
          <span>State</span>
          <select
            className="input"
            value={claimedFilter}
            onChange={(e) => {
              setClaimedFilter(e.target.value as Claimed);
              setPage(1);
            }}
          >
            <option value="all">All</option>
            <option value="claimed">Claimed</option>
            <option value="unclaimed">Unclaimed</option>
          </select>
        </label>
      </form>
      </FilterFold>

      <ErrorBanner error={error} />

      {data && (
        <p className="admin-count" aria-live="polite">
          {data.total === 1 ? '1 invite' : `${data.total} invites`}
        </p>
      )}
      <ResponsiveTable<InviteRow>
        rows={data?.invites ?? []}
        caption="Invite keys"
        rowKey={(i) => i._id}
        empty={data ? 'No invites match these filters.' : 'Loading…'}
        columns={[
          { key: 'key', header: 'Invite key', render: (i) => <code className="admin-break">{i.inviteKey}</code> },
          { key: 'createdBy', header: 'Created by', render: (i) => i.createdBy ?? '—' },
          {
            key: 'claimed',
            header: 'State',
            render: (i) => <StateBadge state={i.claimed ? 'Claimed' : 'Unclaimed'} />,
            nowrap: true,
          },
          { key: 'claimedBy', header: 'Claimed by', render: (i) => i.claimedBy ?? '—' },
          { key: 'createdAt', header: 'Created', render: (i) => formatDate(i.createdAt), nowrap: true },
          {
            key: 'actions',
            header: 'Actions',
            render: (i) => (
              <button type="button" className="btn btn-small btn-danger" onClick={() => void remove(i)} aria-label={`Remove invite ${i.inviteKey}`}>
                Remove
              </button>
            ),
          },
        ]}
      />
      {totalPages > 1 && <Pagination page={page} totalPages={totalPages} onPageChange={setPage} />}
    </section>
  );
}
