import { useCallback, useRef, useState } from 'react';
import { call } from '../../lib/api-client.ts';
import { formatDate } from '../../lib/format.ts';
import { useSession } from '../../lib/session.tsx';
import { Pagination } from '../../components/pagination.tsx';
import { ResponsiveTable } from '../../components/responsive-table.tsx';
import type { adminUsers } from '../../../contract/admin.ts';
import { ErrorBanner } from './error-banner.tsx';
import { StateBadge } from '../../components/state-badge.tsx';
import { FilterFold } from '../../components/filter-fold.tsx';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';
import { useDebounced } from '../../lib/use-debounced.ts';
import { useLoader } from '../../lib/use-loader.ts';
import { usePageInRange } from '../../lib/use-page-in-range.ts';
import { RoleSelect, UserActions } from './user-actions.tsx';
import { UserEditForm } from './user-edit-form.tsx';
import { ASSIGNABLE_ROLES, USERS_PAGE_SIZE, type AdminUserRow } from './admin-types.ts';

type Sort = 'time_created_desc' | 'time_created_asc' | 'role';
type RoleFilter = '' | (typeof ASSIGNABLE_ROLES)[number];

const SORTS: { value: Sort; label: string }[] = [
  { value: 'time_created_desc', label: 'Newest first' },
  { value: 'time_created_asc', label: 'Oldest first' },
  { value: 'role', label: 'Role' },
];

/** /admin/users (spec §2): search, sort, role and banned filters, 8 per page, actions per user. */
export function UsersPage() {
  const { user: me } = useSession();
  const [query, setQuery] = useState('');
  const [sortBy, setSortBy] = useState<Sort>('time_created_desc');
  const [roleFilter, setRoleFilter] = useState<RoleFilter>('');
  const [bannedOnly, setBannedOnly] = useState(false);
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<{ user: AdminUserRow; kind: 'rename' | 'password' } | null>(null);
  const search = useDebounced(query);

  const load = useCallback(
    () =>
      call<typeof adminUsers>('/api/v1/admin/get/users', {
        page,
        limit: USERS_PAGE_SIZE,
        query: search,
        sortBy,
        roleFilter,
        showBannedOnly: bannedOnly,
      }),
    [page, search, sortBy, roleFilter, bannedOnly],
  );
  const { data, error, reload } = useLoader(load);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusAfterRemoval = useFocusAfterRemoval(heading, data);
  const totalPages = data?.totalPages ?? 0;

  usePageInRange(page, totalPages, setPage);

  const filterChanged = () => setPage(1);

  return (
    <section className="admin-page" aria-labelledby="admin-users-title">
      <h1 ref={heading} id="admin-users-title">Users</h1>
      <FilterFold active={[query, roleFilter, bannedOnly].filter(Boolean).length}>
      <form className="admin-filters" role="search" aria-label="Filter users" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>Search</span>
          <input
            className="input"
            type="search"
            value={query}
            placeholder="Username"
            onChange={(e) => {
              setQuery(e.target.value);
              filterChanged();
            }}
          />
        </label>
        <label>
          <span>Sort</span>
          <select
            className="input"
            value={sortBy}
            onChange={(e) => {
              setSortBy(e.target.value as Sort);
              filterChanged();
            }}
          >
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Role</span>
          <select
            className="input"
            value={roleFilter}
            onChange={(e) => {
              setRoleFilter(e.target.value as RoleFilter);
              filterChanged();
            }}
          >
            <option value="">All roles</option>
            {ASSIGNABLE_ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label className="admin-check">
          <input
            type="checkbox"
            checked={bannedOnly}
            onChange={(e) => {
              setBannedOnly(e.target.checked);
              filterChanged();
            }}
          />
          <span>Banned only</span>
        </label>
      </form>
      </FilterFold>

      <ErrorBanner error={error} />

      {editing && (
        <UserEditForm
          key={`${editing.user._id}-${editing.kind}`}
          user={editing.user}
          kind={editing.kind}
          onDone={(changed) => {
            setEditing(null);
            if (changed) reload();
          }}
        />
      )}

      {data && (
        <p className="admin-count" aria-live="polite">
          {data.totalUsers === 1 ? '1 user' : `${data.totalUsers} users`}
        </p>
      )}
      <div className="users-list">
      <ResponsiveTable<AdminUserRow>
        rows={data?.users ?? []}
        caption="Users"
        rowKey={(u) => u._id}
        empty={data ? 'No users match these filters.' : 'Loading…'}
        columns={[
          { key: 'username', header: 'Username', render: (u) => u.username },
          { key: 'role', header: 'Role', render: (u) => <RoleSelect user={u} onChanged={reload} /> },
          {
            key: 'status',
            header: 'Status',
            render: (u) => <StateBadge state={u.banned ? 'Banned' : 'Active'} />,
            nowrap: true,
          },
          { key: 'created', header: 'Joined', render: (u) => formatDate(u.time_created), nowrap: true },
          {
            key: 'actions',
            header: 'Actions',
            render: (u) => (
              <UserActions
                user={u}
                isSelf={me?.username === u.username}
                onChanged={reload}
                onRemoved={focusAfterRemoval}
                onEdit={(kind) => setEditing({ user: u, kind })}
              />
            ),
          },
        ]}
      />
      </div>
      {totalPages > 1 && <Pagination page={page} totalPages={totalPages} onPageChange={setPage} />}
    </section>
  );
}
