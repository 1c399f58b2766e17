import { ChangePasswordForm, ChangeUsernameForm } from './account-forms.tsx';
import { ApiKeysSection } from './api-keys.tsx';
import { InviteKeysSection } from './invite-keys.tsx';
import { UserStatsSection } from './user-stats.tsx';
import './settings.css';

/** Spec §2 /settings. */
export function SettingsPage() {
  return (
    <div className="settings">
      <h1 className="page-title">Settings</h1>
      <div className="settings-grid">
        <ChangeUsernameForm />
        <ChangePasswordForm />
        <ApiKeysSection />
        <InviteKeysSection />
        <UserStatsSection />
      </div>
    </div>
  );
}
