import type { Deps } from '../../deps.ts';
import { HttpError, MESSAGES, badRequest, conflict, notFound } from '../../http/errors.ts';
import { newId, newSecret, nowSeconds } from '../../lib/ids.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../lib/passwords.ts';
import { claimInvite, creatorMayInvite, isClaimable } from '../invites/invites.repository.ts';
import { USERNAME_TAKEN } from '../users/users.service.ts';
import { findUserByUsername, insertUser, isUniqueViolation, lockUser } from '../users/users.repository.ts';
import { API_KEY_PREFIX, createSessionIfPasswordIs } from './caller.repository.ts';
import { countApiKeys, deleteOwnApiKey, insertApiKey, listApiKeys } from './auth.repository.ts';
import type { CaptchaProvider } from './captcha.ts';

export const LOGIN_FAILED = 'Invalid username or password.';
export const INVITE_INVALID = 'Invalid or already used invite key.';
/** A small cap keeps a leaked session from minting keys without end. */
export const MAX_API_KEYS = 10;

/** Spec §7: the login form reads its error at `error.error`, so every login refusal nests it. */
function loginError(status: number, message: string): HttpError {
  return new HttpError(status, message, { error: { error: message } });
}

export interface CaptchaInput {
  captcha?: string;
  captchaType?: CaptchaProvider;
  ip: string;
}

/**
 * Design §4: with no provider secret set, captcha is off and nothing is asked. Otherwise the
 * answer is required and checked with the provider the client chose; without a choice, the
 * first provider (hCaptcha, spec §1) if it is on, else the one that is.
 */
async function checkCaptcha(deps: Deps, input: CaptchaInput, missingMessage: string, wrap: (m: string) => HttpError): Promise<void> {
  const enabled = deps.captcha.enabled();
  if (enabled.length === 0) return;
  if (!input.captcha) throw wrap(missingMessage);
  const provider = input.captchaType ?? (enabled.includes('hcaptcha') ? 'hcaptcha' : enabled[0]!);
  if (!enabled.includes(provider)) throw wrap(`The captcha provider '${provider}' is not enabled on this site.`);
  if (!(await deps.captcha.verify(provider, input.captcha, input.ip))) {
    throw wrap('Captcha verification failed. Please try again.');
  }
}

export async function login(deps: Deps, input: { username: string; password: string } & CaptchaInput): Promise<string> {
  await checkCaptcha(deps, input, 'You must verify the captcha', (m) => loginError(400, m));
  const user = await findUserByUsername(deps.db, input.username);
  // An unknown name costs one hash check too, so timing does not tell which names exist.
  const ok = await verifyPassword(user?.password_hash ?? (await dummyPasswordHash()), input.password);
  if (!user || !ok) throw loginError(401, LOGIN_FAILED);
  // The password and the ban are read again where the session is made: either may have changed
  // while the password was checked (design §6: a change or a ban ends the sessions there were).
  const session = await createSessionIfPasswordIs(deps.db, deps.dialect, user.id, user.password_hash);
  if ('refused' in session) {
    // Changed meanwhile, the password given is no longer this account's; a ban is told only to
    // someone who knows the password.
    throw session.refused === 'password-changed' ? loginError(401, LOGIN_FAILED) : loginError(403, MESSAGES.banned);
  }
  return session.token;
}

/**
 * Design §6: the invite is claimed and the user created in one transaction, so of many
 * registrations racing for one key exactly one account appears. A key lets someone in only
 * while its creator is a live account that is not banned ("nobody gets in where they don't
 * belong"); otherwise it is refused as an unknown key is, so the refusal does not tell that
 * the creator was banned (server/README.md "Invites of banned or removed accounts").
 */
export async function register(deps: Deps, input: { username: string; password: string; invitekey: string } & CaptchaInput): Promise<void> {
  await checkCaptcha(deps, input, 'Please verify the captcha.', badRequest);
  // Cheap checks first, so a bad key or a taken name costs no password hashing.
  if (!(await isClaimable(deps.db, input.invitekey))) throw badRequest(INVITE_INVALID);
  if (await findUserByUsername(deps.db, input.username)) throw conflict(USERNAME_TAKEN);
  const passwordHash = await hashPassword(input.password);
  const id = newId();
  const now = nowSeconds();
  try {
    await deps.db.transaction().execute(async (trx) => {
      // Asked again where the key is claimed: a ban or removal of its creator since the check
      // above is seen here, and one still under way is waited for (creatorMayInvite).
      if (!(await creatorMayInvite(trx, deps.dialect, input.invitekey))) throw badRequest(INVITE_INVALID);
      await insertUser(trx, { id, username: input.username, password_hash: passwordHash, role: 'default', banned: 0, time_created: now });
      if (!(await claimInvite(trx, input.invitekey, id, now))) throw badRequest(INVITE_INVALID);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(USERNAME_TAKEN);
    throw err;
  }
}

interface ApiKeyOut {
  _id: string;
  key: string;
  createdAt: number;
}

export async function apiKeysOf(deps: Deps, userId: string): Promise<ApiKeyOut[]> {
  return (await listApiKeys(deps.db, userId)).map((k) => ({ _id: k.id, key: k.key, createdAt: Number(k.created_at) }));
}

export async function generateApiKey(deps: Deps, userId: string): Promise<ApiKeyOut> {
  const key = { id: newId(), key: API_KEY_PREFIX + newSecret(24) };
  const createdAt = nowSeconds();
  await deps.db.transaction().execute(async (trx) => {
    // Count and insert under the user's row lock: without it, 30 generates at once on
    // PostgreSQL all read "9 keys" and each inserted one (issue 8 item 7).
    await lockUser(trx, deps.dialect, userId);
    if ((await countApiKeys(trx, userId)) >= MAX_API_KEYS) {
      throw conflict(`You can have at most ${MAX_API_KEYS} API keys. Revoke one first.`);
    }
    await insertApiKey(trx, { ...key, user_id: userId, created_at: createdAt });
  });
  return { _id: key.id, key: key.key, createdAt };
}

export async function revokeApiKey(deps: Deps, userId: string, keyOrId: string): Promise<void> {
  if ((await deleteOwnApiKey(deps.db, userId, keyOrId)) === 0) throw notFound('API key not found.');
}
