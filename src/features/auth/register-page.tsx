import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import type { authRegister } from '../../../contract/auth.ts';
import { call, errorMessage } from '../../lib/api-client.ts';
import { REDIRECT_DELAY_MS } from '../../lib/constants.ts';
import { notifyError } from '../../lib/notify.ts';
import { CaptchaField, useCaptchaProviders, type CaptchaValue } from './captcha.tsx';
import { MSG_AGREE, MSG_REGISTER_CAPTCHA, validateRegister } from './validation.ts';
import './auth.css';
import { Banner } from '../../components/banner.tsx';

/** Spec §2 /register. */
export function RegisterPage() {
  const navigate = useNavigate();
  const providers = useCaptchaProviders();
  // Issue 11 item 11: an invite link (/register?invite=<key>) arrives with the code filled in.
  const [params] = useSearchParams();
  const [form, setForm] = useState(() => ({ username: '', password: '', confirmPassword: '', inviteKey: (params.get('invite') ?? '').trim() }));
  const [agreed, setAgreed] = useState(false);
  const [captcha, setCaptcha] = useState<CaptchaValue>({ token: null, type: providers[0] ?? 'hcaptcha' });
  const [error, setError] = useState('');
  const [success, setSuccess] = useState('');
  const [busy, setBusy] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const set = (key: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) => setForm((f) => ({ ...f, [key]: e.target.value }));

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError('');
    const problem = validateRegister({ ...form, agreed });
    if (problem) {
      setError(problem);
      return;
    }
    if (providers.length > 0 && !captcha.token) {
      notifyError(MSG_REGISTER_CAPTCHA); // spec §5: a toast, not a banner
      return;
    }
    setBusy(true);
    try {
      await call<typeof authRegister>('/api/v1/auth/register', {
        username: form.username.trim(),
        password: form.password,
        invitekey: form.inviteKey.trim(),
        ...(captcha.token ? { captcha: captcha.token, captchaType: captcha.type } : {}),
      });
      setSuccess('Success: Account has been created! Redirecting...');
      timer.current = setTimeout(() => navigate('/login'), REDIRECT_DELAY_MS);
    } catch (err) {
      setError(`Error: ${errorMessage(err, 'An internal error occurred.')}`);
      setBusy(false);
    }
  }

  return (
    <section className="card auth-card" aria-labelledby="register-title">
      <h1 id="register-title">Register</h1>
      <Banner kind="error" text={error} />
      <Banner kind="success" text={success} />
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="reg-username">Username</label>
          <input id="reg-username" className="input" autoComplete="username" required value={form.username} onChange={set('username')} />
          <p className="hint">3–32 letters, digits, _ . or -</p>
        </div>
        <div className="field">
          <label htmlFor="reg-password">Password</label>
          <input id="reg-password" className="input" type="password" autoComplete="new-password" required value={form.password} onChange={set('password')} />
          <p className="hint">At least 8 characters</p>
        </div>
        <div className="field">
          <label htmlFor="reg-confirm">Confirm password</label>
          <input
            id="reg-confirm"
            className="input"
            type="password"
            autoComplete="new-password"
            required
            value={form.confirmPassword}
            onChange={set('confirmPassword')}
          />
        </div>
        <div className="field">
          <label htmlFor="reg-invite">Invite code</label>
          <input id="reg-invite" className="input" autoComplete="off" required value={form.inviteKey} onChange={set('inviteKey')} />
        </div>
        <CaptchaField onChange={setCaptcha} />
        <div className="checkbox">
          <input id="reg-terms" type="checkbox" checked={agreed} onChange={(e) => setAgreed(e.target.checked)} />
          <label htmlFor="reg-terms">
            I agree to the <Link to="/privacy">Privacy Policy</Link> and the <Link to="/tos">Terms of Service</Link>
          </label>
        </div>
        <button type="submit" className="btn btn-primary" disabled={!agreed || busy}>
          {agreed ? 'Register' : MSG_AGREE}
        </button>
      </form>
      <p className="auth-alt">
        Already have an account? <Link to="/login">Login</Link>
      </p>
    </section>
  );
}
