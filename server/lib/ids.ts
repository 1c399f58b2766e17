import crypto from 'node:crypto';

/** Record ids: 96 random bits as hex, the length clients know from the spec's `_id`. */
export function newId(): string {
  return crypto.randomBytes(12).toString('hex');
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
