import type { UploadRecord } from '../store/schema.ts';

/** Who is signed in where the queue runs (issue 11 item 1). */
export interface QueueAuth {
  apiUrl: string;
  token: string | null;
  /**
   * The signed-in user's owner key: the user id from auth/data, or `token:<sha256 of the
   * token>` until that is known (offline). Null when nobody is signed in.
   */
  owner: string | null;
  /**
   * The token's own key (`token:<sha256 of the token>`) while `owner` is the user id: what this
   * token filed before the server named the user is still its own. The uploads are handed from
   * the key to the id (UploadQueue.adoptOwner) after the owner changes; without the alias they
   * would belong to nobody in between, vanish from the list and have their request aborted.
   */
  alias?: string | null;
}

export const TOKEN_OWNER_PREFIX = 'token:';

/** Uploads belong to whoever queued them: nobody else sees them or sends them. */
export function ownedBy(record: Pick<UploadRecord, 'owner'>, auth: QueueAuth): boolean {
  if (auth.token === null || auth.owner === null || record.owner === undefined) return false;
  return record.owner === auth.owner || record.owner === auth.alias;
}
