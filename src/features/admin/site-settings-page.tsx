import { InviteLimitsSection } from './invite-limits-section.tsx';
import { MaxFileSizeForm } from './max-file-size-form.tsx';
import { MimeTypesSection } from './mime-types-section.tsx';
import { SiteStatsSection } from './site-stats-section.tsx';
import { SiteSwitches } from './site-switches.tsx';
import { UploadLimitsSection } from './upload-limits-section.tsx';

/** /admin/settings, "Site Settings" (spec §2). */
export function SiteSettingsPage() {
  return (
    <section className="admin-page" aria-labelledby="admin-settings-title">
      <h1 id="admin-settings-title">Site Settings</h1>
      <div className="admin-grid">
        <SiteSwitches />
        <MaxFileSizeForm />
        <MimeTypesSection />
        <InviteLimitsSection />
        <UploadLimitsSection />
        <SiteStatsSection />
      </div>
    </section>
  );
}
