import type * as Argon2 from '@node-rs/argon2';
/**
 * The native argon2 module loads at the first password checked or set, not at start (issue 9,
 * a lean process: a files-only process never needs it).
 */
let argon2: Promise<typeof Argon2> | null = null;
const load = () => (argon2 ??= import('@node-rs/argon2'));

// argon2id with the OWASP-recommended minimum (19 MiB, 2 passes, 1 lane): strong enough for
// stored passwords while a 2-core server still answers a login in tens of milliseconds.
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return load().then((a) => a.hash(password, OPTIONS));
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await (await load()).verify(stored, password);
  } catch {
    return false;
  }
}

/** A hash of nothing anyone knows, verified against when the username does not exist, so a
 * wrong username costs as long as a wrong password and timing tells nothing. */
let dummyHash: Promise<string> | null = null;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword('stash-timing-equaliser');
  return dummyHash;
}
