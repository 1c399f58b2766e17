import type { UploadStore } from '../store/upload-store.ts';
import { sha256Hex } from '../store/write-chunks.ts';
import { backoffDelay, type BackoffOptions } from './backoff.ts';
import { TOKEN_OWNER_PREFIX } from './owner.ts';
import type { Transport } from './transport.ts';

export async function tokenHash(token: string): Promise<string> {
  return sha256Hex(new TextEncoder().encode(token).buffer as ArrayBuffer);
}

export interface Who {
  owner: string;
  known: boolean;
  provisional: string;
  /**
   * No answer naming the user arrived although the token was not refused (offline, a dropped
   * connection, a restarting server): worth asking again.
   */
  askAgain: boolean;
}

/**
 * Issue 11 item 1: who a token belongs to. The user id comes from auth/data and is remembered
 * under the token's hash (never the token), so an offline start still knows. Until the server
 * has answered once, the owner is `token:<hash>`, which only that token matches. `told`: the user
 * the page's own session check already named (Identity.remember), taken without asking.
 */
export async function ownerOf(token: string, apiUrl: string, store: UploadStore | null, transport: Transport, told?: string): Promise<Who> {
  const hash = await tokenHash(token);
  const provisional = TOKEN_OWNER_PREFIX + hash;
  const cached = told ?? (await store?.getOwner(hash).catch(() => undefined));
  if (cached) return { owner: cached, known: true, provisional, askAgain: false };
  try {
    const answer = await transport.postJson(`${apiUrl}/api/v1/auth/data`, { token }, AbortSignal.timeout(15_000));
    const user = (answer.body as { user?: { _id?: unknown } } | null)?.user;
    if (answer.status === 200 && typeof user?._id === 'string') {
      await store?.setOwner(hash, user._id).catch(() => undefined);
      return { owner: user._id, known: true, provisional, askAgain: false };
    }
    // A refused token (signed out elsewhere, banned) stays unknown until the user signs in again.
    return { owner: provisional, known: false, provisional, askAgain: answer.status !== 401 && answer.status !== 403 };
  } catch {
    // offline: the hash stands in until the server can say
    return { owner: provisional, known: false, provisional, askAgain: true };
  }
}

export interface IdentityDeps {
  apiUrl: () => string;
  store: () => UploadStore | null;
  transport: Transport;
  /** The token the queue runs with now: an answer for any other one is stale. */
  currentToken: () => string | null;
  /** Takes the owner the lookup settled on (known, `token:<hash>`, or null when signed out). */
  setOwner: (owner: string | null) => Promise<void>;
  /** The server named the user: what was queued under the token's hash (or under no owner) is theirs. */
  named: (who: Who) => Promise<void>;
  backoff?: BackoffOptions;
}

/** Asking again after a failed lookup: soon at first, then at most once a minute. */
export const IDENTIFY_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 60_000 };

/**
 * Learns who the queue's token belongs to, and keeps asking until the server says. An answer
 * lost on a flaky connection while the browser still reports itself online fires no `online`
 * event, so without asking again the user's stored uploads would wait (unsent, and invisible to
 * them) until the next sign-in.
 */
export class Identity {
  private retry: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  /** Bumped by every lookup: an answer that arrives after a newer one started is stale. */
  private turn = 0;
  /** Owners the page learned from its own auth/data answer, by token. */
  private readonly told = new Map<string, string>();

  constructor(private readonly deps: IdentityDeps) {}

  /**
   * The page's session check already named the user behind `token` (its auth/data answered).
   * The worker's own lookup can miss on a connection that drops right after sign-in, and an
   * upload queued meanwhile would be filed under the token's hash; once that token is gone
   * (signed out, "keep for my next sign-in") nobody could ever claim it again.
   */
  async remember(token: string, owner: string): Promise<void> {
    this.told.set(token, owner);
    await this.deps.store()?.setOwner(await tokenHash(token), owner).catch(() => undefined);
  }

  async identify(token: string | null): Promise<void> {
    this.stop();
    const turn = ++this.turn;
    if (!token) {
      this.told.clear();
      await this.deps.setOwner(null);
      return;
    }
    const who = await ownerOf(token, this.deps.apiUrl(), this.deps.store(), this.deps.transport, this.told.get(token));
    // Signed out, switched, or a newer lookup (one the page told) started meanwhile.
    if (this.deps.currentToken() !== token || turn !== this.turn) return;
    await this.deps.setOwner(who.owner);
    if (who.known) {
      this.failures = 0;
      await this.deps.named(who);
      return;
    }
    if (!who.askAgain) return;
    const delay = backoffDelay(this.failures++, this.deps.backoff ?? IDENTIFY_BACKOFF);
    this.retry = setTimeout(() => void this.identify(token).catch(() => undefined), delay);
  }

  /** Asks at once (online again); no-op while the owner is known. */
  askNowIfUnknown(token: string | null, owner: string | null): Promise<void> {
    if (!token || !owner?.startsWith(TOKEN_OWNER_PREFIX)) return Promise.resolve();
    return this.identify(token);
  }

  stop(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
  }
}
