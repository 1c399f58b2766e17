import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, Navigate, useNavigate } from 'react-router-dom';
import type { authLogin } from '../../../contract/auth.ts';
import { call, errorMessage } from '../../lib/api-client.ts';
import { REDIRECT_DELAY_MS } from '../../lib/constants.ts';
import { useSession } from '../../lib/session.tsx';
import { CaptchaField, useCaptchaProviders, type CaptchaValue } from './captcha.tsx';
import { MSG_LOGIN_CAPTCHA } from './validation.ts';
import './auth.css';
import { Banner } from '../../components/banner.tsx';

/** Spec §2 /login. */
export function LoginPage() {
  const { user, loading, signIn } = useSession();
  const navigate = useNavigate();
  const providers = useCaptchaProviders();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [captcha, setCaptcha] = useState<CaptchaValue>({ token: null, type: providers[0] ?? 'hcaptcha' });
  const [error, setError] = useState('');
  const [success, setSuccess] = useState('');
  const [busy, setBusy] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  // Spec §2: a user with a valid stored token goes straight to the dashboard.
  if (!loading && user && !success) return <Navigate to="/dashboard" replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError('');
    if (providers.length > 0 && !captcha.token) {
      setError(MSG_LOGIN_CAPTCHA);
      return;
    }
    setBusy(true);
    try {
      const res = await call<typeof authLogin>('/api/v1/auth/login', {
        username,
        password,
        ...(captcha.token ? { captcha: captcha.token, captchaType: captcha.type } : {}),
      });
      setSuccess('Success: You have been authenticated! Redirecting...');
      timer.current = setTimeout(() => {
        void signIn(res.token).then(() => navigate('/dashboard', { replace: true }));
      }, REDIRECT_DELAY_MS);
    } catch (err) {
      setError(`Error: ${errorMessage(err, 'An internal error occurred.')}`);
      setBusy(false);
    }
  }

  return (
    <section className="card auth-card" aria-labelledby="login-title">
      <h1 id="login-title">Login</h1>
      <Banner kind="error" text={error} />
      <Banner kind="success" text={success} />
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="login-username">Username</label>
          <input id="login-username" className="input" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="login-password">Password</label>
          <input
            id="login-password"
            className="input"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </div>
        <CaptchaField onChange={setCaptcha} />
        <button type="submit" className="btn btn-primary" disabled={busy || !username || !password}>
          Login
        </button>
      </form>
      <p className="auth-alt">
        No account yet? <Link to="/register">Register with an invite code</Link>
      </p>
    </section>
  );
}
