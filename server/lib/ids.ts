import crypto from 'node:crypto';

/** The last id's two halves: the millisecond it carries and its 48 bits after it. */
let lastMs = 0;
let lastLow = 0;
const LOW_LIMIT = 2 ** 48;

/**
 * Record ids: 24 hex characters (the length clients know from the spec's `_id`), the creation
 * time in milliseconds and then 48 random bits. Lists break ties of their one-second
 * `time_created` by id (files, users, invites): random ids put the files of one multi-file
 * upload in an order nobody chose, where these keep the order they were made in. Within one
 * millisecond a process counts on from its last id, so its ids only ever grow, also when the
 * clock steps back. Ids are names, never secrets (newSecret makes those): knowing one says when
 * its record was made, which time_created tells anyway. New rows also land at the end of every
 * index that holds the id, not all over it.
 */
export function newId(): string {
  const now = Date.now();
  // A new millisecond, or the count run out within one (then the ids run a millisecond ahead):
  // fresh random bits.
  if (now > lastMs || ++lastLow >= LOW_LIMIT) {
    lastMs = Math.max(now, lastMs + 1);
    lastLow = crypto.randomBytes(6).readUIntBE(0, 6);
  }
  return lastMs.toString(16).padStart(12, '0') + lastLow.toString(16).padStart(12, '0');
}

/** Opaque secrets (session tokens, API keys, invite keys): 256 random bits unless asked otherwise. */
export function newSecret(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string | Buffer): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
