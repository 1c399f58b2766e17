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
}

export const TOKEN_OWNER_PREFIX = 'token:';

/** Uploads belong to whoever queued them: nobody else sees them or sends them. */
export function ownedBy(record: Pick<UploadRecord, 'owner'>, auth: QueueAuth): boolean {
  return auth.token !== null && auth.owner !== null && record.owner === auth.owner;
}
