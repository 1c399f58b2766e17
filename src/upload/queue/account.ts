import type { UploadStore } from '../store/upload-store.ts';
import { sha256Hex } from '../store/write-chunks.ts';
import { TOKEN_OWNER_PREFIX } from './owner.ts';
import type { Transport } from './transport.ts';

export async function tokenHash(token: string): Promise<string> {
  return sha256Hex(new TextEncoder().encode(token).buffer as ArrayBuffer);
}

/**
 * Issue 11 item 1: who a token belongs to. The user id comes from auth/data and is remembered
 * under the token's hash (never the token), so an offline start still knows. Until the server
 * has answered once, the owner is `token:<hash>`, which only that token matches.
 */
export async function ownerOf(token: string, apiUrl: string, store: UploadStore | null, transport: Transport): Promise<{ owner: string; known: boolean; provisional: string }> {
  const hash = await tokenHash(token);
  const provisional = TOKEN_OWNER_PREFIX + hash;
  const cached = await store?.getOwner(hash).catch(() => undefined);
  if (cached) return { owner: cached, known: true, provisional };
  try {
    const answer = await transport.postJson(`${apiUrl}/api/v1/auth/data`, { token }, AbortSignal.timeout(15_000));
    const user = (answer.body as { user?: { _id?: unknown } } | null)?.user;
    if (answer.status === 200 && typeof user?._id === 'string') {
      await store?.setOwner(hash, user._id).catch(() => undefined);
      return { owner: user._id, known: true, provisional };
    }
  } catch {
    // offline: the hash stands in until the server can say
  }
  return { owner: provisional, known: false, provisional };
}
