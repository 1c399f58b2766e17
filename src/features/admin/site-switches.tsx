import { useCallback, useReducer, useState } from 'react';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import type { adminUpdateSettings } from '../../../contract/admin.ts';
import type { utilsSettings } from '../../../contract/utils.ts';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import { ErrorBanner } from './error-banner.tsx';
import { useLoader } from '../../lib/use-loader.ts';
import { GENERAL_FAILURE } from './admin-types.ts';

type SettingName = 'allow_uploading' | 'maintenance_mode';

/**
 * `shutsOut`: the position that locks people out at once, asked about first (a switch is one
 * stray tap on a phone; banning one user already asks).
 */
const SWITCHES: { name: SettingName; label: string; hint: string; shutsOut: { value: boolean; question: string; confirmLabel: string } }[] = [
  {
    name: 'allow_uploading',
    label: 'Allow uploading',
    hint: 'When off, nobody can upload, admins included.',
    shutsOut: { value: false, question: 'Stop all uploads? Nobody will be able to upload, admins included, until you turn this back on.', confirmLabel: 'Stop uploads' },
  },
  {
    name: 'maintenance_mode',
    label: 'Maintenance mode',
    hint: 'When on, only admins can use the site.',
    shutsOut: { value: true, question: 'Turn on maintenance mode? Everyone but admins will be locked out of the site until you turn it off.', confirmLabel: 'Turn on' },
  },
];

/** The two global switches of spec §4, read with utils/settings and written with admin/update/settings. */
export function SiteSwitches() {
  const load = useCallback(() => call<typeof utilsSettings>('/api/v1/utils/settings', {}), []);
  const { data, error, reload } = useLoader(load);
  // What the admin just asked for, shown until the server's state is read back.
  const [pending, setPending] = useState<Partial<Record<SettingName, boolean>>>({});

  const confirm = useConfirm();
  const [, redraw] = useReducer((n: number) => n + 1, 0);

  const flip = async (name: SettingName, value: boolean) => {
    setPending((p) => ({ ...p, [name]: value }));
    try {
      await call<typeof adminUpdateSettings>('/api/v1/admin/update/settings', { setting: name, value });
      notifySuccess(`${SWITCHES.find((s) => s.name === name)?.label ?? name} is now ${value ? 'on' : 'off'}.`, { short: true });
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
    setPending((p) => {
      const next = { ...p };
      delete next[name];
      return next;
    });
    reload();
  };

  return (
    <section className="card admin-section" aria-labelledby="switches-title">
      <h2 id="switches-title">Switches</h2>
      <ErrorBanner error={error} />
      {SWITCHES.map((s) => {
        const checked = pending[s.name] ?? data?.settings[s.name] ?? false;
        return (
          <label key={s.name} className="admin-switch">
            <input
              type="checkbox"
              role="switch"
              checked={checked}
              aria-checked={checked}
              disabled={!data || pending[s.name] !== undefined}
              aria-describedby={`${s.name}-hint`}
              onChange={(e) => {
                const value = e.target.checked;
                if (s.shutsOut.value !== value) {
                  void flip(s.name, value);
                  return;
                }
                // Nothing moves until the admin says yes. The box itself kept the tick the click
                // gave it (seen in Chromium, under the question and after a "no", though React
                // held the old value): drawn again at once, it shows the server's state.
                redraw();
                void confirm(s.shutsOut.question, { confirmLabel: s.shutsOut.confirmLabel, danger: true }).then((yes) => (yes ? flip(s.name, value) : undefined));
              }}
            />
            <span className="admin-switch-label">{s.label}</span>
            <span id={`${s.name}-hint`} className="admin-hint">
              {s.hint}
            </span>
          </label>
        );
      })}
    </section>
  );
}
