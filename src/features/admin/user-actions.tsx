import { call, errorMessage, ApiError } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { formatDate } from '../../lib/format.ts';
import { useState } from 'react';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import { ActionSheet } from '../../components/action-sheet.tsx';
import type { adminRemoveUser, adminSetBan, adminUpdateRole } from '../../../contract/admin.ts';
import { ASSIGNABLE_ROLES, GENERAL_FAILURE, type AdminUserRow, type AssignableRole } from './admin-types.ts';

/** Spec §8: the text shown when a ban or unban fails for a reason the server did not explain. */
export const BAN_FAILURE = 'An internal error has occurred. Please create a support ticket for assistance.';

function isAssignable(role: string): role is AssignableRole {
  return (ASSIGNABLE_ROLES as readonly string[]).includes(role);
}

export function RoleSelect({ user, onChanged }: { user: AdminUserRow; onChanged: () => void }) {
  // An admin's row has no dropdown: admin cannot be picked (spec §4), so the control could
  // only ever demote, which design §6 refuses for the last admin anyway.
  const confirm = useConfirm();
  if (!isAssignable(user.role)) return <span className="badge">admin</span>;
  const change = async (newRole: AssignableRole, select: HTMLSelectElement) => {
    // The shipped app runs on preact/compat, which leaves a select's DOM value as picked when
    // the state it renders from did not change: a refused or failed change puts it back by hand,
    // so the row never shows a role the user does not have.
    const putBack = () => {
      select.value = user.role;
    };
    // Issue 11 item 11: a role is a grant of power; a slip of the thumb on a phone must not give it.
    if (!(await confirm(`Change the role of ${user.username} from ${user.role} to ${newRole}?`, { confirmLabel: `Make ${newRole}` }))) return putBack();
    try {
      await call<typeof adminUpdateRole>('/api/v1/admin/update/role', { userId: user._id, newRole });
      notifySuccess(`${user.username} is now ${newRole}.`, { short: true });
    } catch (err) {
      putBack();
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
    onChanged();
  };
  return (
    <select
      className="input admin-role-select"
      aria-label={`Role of ${user.username}`}
      value={user.role}
      onChange={(e) => {
        if (isAssignable(e.target.value)) void change(e.target.value, e.currentTarget);
      }}
    >
      {ASSIGNABLE_ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  );
}

interface ActionsProps {
  user: AdminUserRow;
  isSelf: boolean;
  onChanged: () => void;
  /** The account is gone: its row, which held focus, goes with the next read of the list. */
  onRemoved?: () => void;
  onEdit: (kind: 'rename' | 'password') => void;
}

export function UserActions({ user, isSelf, onChanged, onRemoved, onEdit }: ActionsProps) {
  const confirm = useConfirm();
  const [sheet, setSheet] = useState(false);
  // A large account's removal is answered after up to 10 s (server users/account-removals.ts):
  // meanwhile the row says so and offers nothing more, so a second tap does not ask again.
  const [deleting, setDeleting] = useState(false);
  // admin/set/ban toggles (contract adminSetBan): a second "Ban" confirmed while the first is on
  // its way, or before the list shows its result, would unban. The row offers none until the
  // list has been read again after the answer (a new `user`).
  const [banning, setBanning] = useState(false);
  const [bannedFrom, setBannedFrom] = useState<AdminUserRow | null>(null);
  const banHeld = banning || bannedFrom === user;
  const verb = user.banned ? 'unban' : 'ban';

  const toggleBan = async () => {
    // Spec §4: the confirm text says ban or unban.
    if (!(await confirm(`Are you sure you want to ${verb} ${user.username}?`, { confirmLabel: user.banned ? 'Unban' : 'Ban', danger: !user.banned }))) return;
    setBanning(true);
    setBannedFrom(user);
    try {
      const res = await call<typeof adminSetBan>('/api/v1/admin/set/ban', { userId: user._id });
      notifySuccess(res.banned ? `${user.username} has been banned.` : `${user.username} has been unbanned.`);
    } catch (err) {
      // A refusal the server explains (e.g. banning yourself, 403) is worth reading; anything
      // else gets the spec §8 text.
      const explained = err instanceof ApiError && err.fromServer && err.status >= 400 && err.status < 500;
      notifyError(explained ? err.message : BAN_FAILURE);
    } finally {
      setBanning(false);
    }
    onChanged();
  };

  const remove = async () => {
    if (!(await confirm(`Delete the account ${user.username}? This cannot be undone.`, { confirmLabel: 'Delete', danger: true }))) return;
    setDeleting(true);
    try {
      await call<typeof adminRemoveUser>('/api/v1/admin/set/remove', { userId: user._id });
      notifySuccess(`${user.username} has been deleted.`);
      onRemoved?.();
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    } finally {
      setDeleting(false);
    }
    onChanged();
  };

  return (
    <>
    {/* On a phone the row stays compact: one button opens the actions in a sheet (issue 11 item 11). */}
    <button type="button" className="btn btn-small admin-actions-more" aria-haspopup="dialog" onClick={() => setSheet(true)} disabled={deleting} aria-label={`Actions for ${user.username}`}>
      {deleting ? 'Deleting…' : 'Actions'}
    </button>
    {sheet && (
      <ActionSheet
        title={user.username}
        subtitle={`${user.role}${user.banned ? ', banned' : ''} · joined ${formatDate(user.time_created)}`}
        onClose={() => setSheet(false)}
        actions={[
          { label: user.banned ? 'Unban' : 'Ban', onSelect: () => void toggleBan(), disabled: isSelf || banHeld, danger: !user.banned },
          { label: 'Rename', onSelect: () => onEdit('rename') },
          { label: 'Reset password', onSelect: () => onEdit('password') },
          { label: 'Delete', onSelect: () => void remove(), disabled: isSelf, danger: true },
        ]}
      />
    )}
    <div className="admin-actions admin-actions-inline">
      <button type="button" className="btn btn-small" onClick={() => void toggleBan()} disabled={isSelf || deleting || banHeld} aria-label={`${user.banned ? 'Unban' : 'Ban'} ${user.username}`}>
        {user.banned ? 'Unban' : 'Ban'}
      </button>
      <button type="button" className="btn btn-small" onClick={() => onEdit('rename')} disabled={deleting} aria-label={`Rename ${user.username}`}>
        Rename
      </button>
      <button type="button" className="btn btn-small" onClick={() => onEdit('password')} disabled={deleting} aria-label={`Reset password of ${user.username}`}>
        Reset password
      </button>
      <button type="button" className="btn btn-small btn-danger" onClick={() => void remove()} disabled={isSelf || deleting} aria-label={`Delete ${user.username}`}>
        {deleting ? 'Deleting…' : 'Delete'}
      </button>
    </div>
    </>
  );
}
