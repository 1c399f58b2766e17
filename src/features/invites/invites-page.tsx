import { useCallback, useRef, useState } from 'react';
import type { Invite } from '../../../contract/common.ts';
import type { manageInviteRemoval, manageInvites } from '../../../contract/invites.ts';
import { CopyLink } from '../../components/copy-link.tsx';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import { Pagination } from '../../components/pagination.tsx';
import { ResponsiveTable } from '../../components/responsive-table.tsx';
import { call, errorMessage } from '../../lib/api-client.ts';
import { useLoader } from '../../lib/use-loader.ts';
import { usePageInRange } from '../../lib/use-page-in-range.ts';
import { loadFailureText } from '../../lib/use-retry-unreachable.ts';
import { PAGE_SIZE_INVITES } from '../../lib/constants.ts';
import { formatDate } from '../../lib/format.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { useDebounced } from '../../lib/use-debounced.ts';
import { Banner } from '../../components/banner.tsx';
import { StateBadge } from '../../components/state-badge.tsx';
import { Link } from 'react-router-dom';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';

type Claimed = 'all' | 'claimed' | 'unclaimed';

/** Spec §2 /invites: the invites this user created, 8 per page. */
export function InvitesPage() {
  const confirm = useConfirm();
  const [page, setPage] = useState(1);
  const [claimed, setClaimed] = useState<Claimed>('all');
  const [claimedBy, setClaimedBy] = useState('');
  const claimedByFilter = useDebounced(claimedBy);
  const heading = useRef<HTMLHeadingElement>(null);

  const load = useCallback(
    () =>
      call<typeof manageInvites>('/api/v1/manage/invites', {
        page,
        limit: PAGE_SIZE_INVITES,
        filters: { claimedFilter: claimed, claimedBy: claimedByFilter },
      }),
    [page, claimed, claimedByFilter],
  );
  const { data, error, reload } = useLoader(load);
  const invites = data?.invites ?? [];
  const errorText = error === null ? '' : loadFailureText(error, 'this list');
  const focusAfterRemoval = useFocusAfterRemoval(heading, data);
  const totalPages = Math.max(1, data?.totalPages ?? 1);
  usePageInRange(page, totalPages, setPage);

  async function remove(invite: Invite) {
    if (!(await confirm(`Delete the invite ${invite.inviteKey}?`, { confirmLabel: 'Delete', danger: true }))) return;
    try {
      await call<typeof manageInviteRemoval>('/api/v1/manage/inviteremoval', { inviteKeyId: invite._id });
      notifySuccess('Invite deleted', { short: true });
      focusAfterRemoval();
      if (invites.length === 1 && page > 1) setPage(page - 1);
      else reload();
    } catch (err) {
      notifyError(errorMessage(err, 'An internal error occurred.'));
    }
  }

  return (
    <div>
      <h1 ref={heading} className="page-title">Invites Given</h1>
      <div className="card filters">
        <div className="field">
          <label htmlFor="inv-claimed">Status</label>
          <select
            id="inv-claimed"
            className="input"
            value={claimed}
            onChange={(e) => {
              setClaimed(e.target.value as Claimed);
              setPage(1);
            }}
          >
            <option value="all">All</option>
            <option value="claimed">Claimed</option>
            <option value="unclaimed">Unclaimed</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="inv-claimed-by">Claimed by</label>
          <input
            id="inv-claimed-by"
            className="input"
            type="search"
            value={claimedBy}
            onChange={(e) => {
              setClaimedBy(e.target.value);
              setPage(1);
            }}
          />
        </div>
      </div>
      <Banner kind="error" text={errorText} />
      {/* Issue 11 item 12: no invites at all yet says where they come from. */}
      {data !== null && error === null && invites.length === 0 && claimed === 'all' && !claimedBy && (
        <div className="card empty-state">
          <h2>No invites yet</h2>
          <p className="hint">Invite keys you generate in Settings are listed here, with who claimed them.</p>
          <Link to="/settings" className="btn btn-primary">
            Generate an invite key
          </Link>
        </div>
      )}
      <div className="card">
        <ResponsiveTable
          caption="Invites you created"
          rows={invites}
          rowKey={(i) => i._id}
          empty="No invites found."
          columns={[
            {
              key: 'key',
              header: 'Invite key',
              render: (i) => (
                <CopyLink url={i.inviteKey} className="mono tap">
                  {i.inviteKey}
                </CopyLink>
              ),
            },
            {
              key: 'status',
              header: 'Status',
              render: (i) => <StateBadge state={i.claimed ? 'Claimed' : 'Unclaimed'} />,
              nowrap: true,
            },
            { key: 'by', header: 'Claimed by', render: (i) => i.claimedBy ?? '—' },
            { key: 'created', header: 'Created', render: (i) => formatDate(i.createdAt), nowrap: true },
            {
              key: 'actions',
              header: 'Actions',
              render: (i) => (
                <button type="button" className="btn btn-small btn-danger" onClick={() => void remove(i)} aria-label={`Delete invite ${i.inviteKey}`}>
                  Delete
                </button>
              ),
            },
          ]}
        />
      </div>
      <Pagination page={page} totalPages={totalPages} onPageChange={setPage} />
    </div>
  );
}
