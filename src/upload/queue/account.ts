import type { UploadStore } from '../store/upload-store.ts';
import { sha256Hex } from '../store/chunk-hash.ts';
import { backoffDelay, type BackoffOptions } from './backoff.ts';
import { TOKEN_OWNER_PREFIX } from './owner.ts';
import type { Transport } from './transport.ts';

export async function tokenHash(token: string): Promise<string> {
  return sha256Hex(new TextEncoder().encode(token).buffer as ArrayBuffer);
}

/** The owner key a token's uploads are filed under until the server names its user. */
function ownerKeyOf(hash: string): string {
  return TOKEN_OWNER_PREFIX + hash;
}

/** `token:<sha256 of the token>`: only that token matches it (QueueAuth.alias). */
export async function tokenKey(token: string): Promise<string> {
  return ownerKeyOf(await tokenHash(token));
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
 * What this device already knows about a token, without the network: the user the page's own
 * session check named (`told`, Identity.remember) or the id remembered under the token's hash
 * (never the token); otherwise `token:<hash>`, which only that token matches.
 */
async function localOwner(token: string, store: UploadStore | null, told?: string): Promise<Who> {
  const hash = await tokenHash(token);
  const provisional = ownerKeyOf(hash);
  const cached = told ?? (await store?.getOwner(hash).catch(() => undefined));
  if (cached) return { owner: cached, known: true, provisional, askAgain: false };
  return { owner: provisional, known: false, provisional, askAgain: true };
}

/**
 * Issue 11 item 1: the server says who a token belongs to (auth/data), and the answer is
 * remembered under the token's hash so an offline start still knows.
 */
async function askServer(token: string, apiUrl: string, store: UploadStore | null, transport: Transport, provisional: string): Promise<Who> {
  try {
    const answer = await transport.postJson(`${apiUrl}/api/v1/auth/data`, { token }, AbortSignal.timeout(15_000));
    const user = (answer.body as { user?: { _id?: unknown } } | null)?.user;
    if (answer.status === 200 && typeof user?._id === 'string') {
      await store?.setOwner(await tokenHash(token), user._id).catch(() => undefined);
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
  /**
   * Takes the owner the lookup settled on (known, `token:<hash>`, or null when signed out) and
   * the token's own key, which stays the same user's (QueueAuth.alias).
   */
  setOwner: (owner: string | null, alias: string | null) => Promise<void>;
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
  /**
   * Owners known by token in this context's life: told by the page (its own auth/data answer) or
   * answered to a lookup. A repeated lookup of the same token never files its uploads under the
   * hash again while the answer is asked for anew (no store to remember it: IndexedDB missing).
   */
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

  /**
   * Settles who `token` belongs to, asking the server (and again, with backoff) when this device
   * does not know yet. The queue has an owner to file uploads under as soon as the local part is
   * done (`settled`): the token's hash until the server answers, so a file picked right after
   * sign-in on a stalled connection is queued at once instead of waiting up to the lookup's
   * 15 s timeout, and the server's answer hands it to the user (`named`).
   */
  async identify(token: string | null, settled?: () => void): Promise<void> {
    this.stop();
    const turn = ++this.turn;
    // Signed out, switched, or a newer lookup (one the page told) started meanwhile.
    const stale = () => this.deps.currentToken() !== token || turn !== this.turn;
    if (!token) {
      this.told.clear();
      await this.deps.setOwner(null, null);
      return;
    }
    const local = await localOwner(token, this.deps.store(), this.told.get(token));
    if (stale()) return;
    await this.deps.setOwner(local.owner, local.provisional);
    settled?.();
    const who = local.known ? local : await askServer(token, this.deps.apiUrl(), this.deps.store(), this.deps.transport, local.provisional);
    if (stale()) return;
    if (who.known) {
      this.told.set(token, who.owner);
      if (who !== local) await this.deps.setOwner(who.owner, who.provisional);
      this.failures = 0;
      await this.deps.named(who);
      return;
    }
    if (!who.askAgain) return;
    const delay = backoffDelay(this.failures++, this.deps.backoff ?? IDENTIFY_BACKOFF);
    this.retry = setTimeout(() => void this.identify(token).catch(() => undefined), delay);
  }

  /**
   * identify, returning once the queue has an owner to file uploads under (or the lookup went
   * stale), with the server's answer still to come: what the worker's start and a new token wait
   * for, so the upload screen never waits on the network.
   */
  begin(token: string | null): Promise<void> {
    return new Promise<void>((resolve) => {
      this.identify(token, resolve).then(resolve, resolve);
    });
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
