import type { UploadRecord } from './schema.ts';
import { sha256Hex } from './chunk-hash.ts';

/** How much of the start of a file is hashed to recognise it when picked again. */
export const HEAD_BYTES = 64 * 1024;

export type Fingerprint = Pick<UploadRecord, 'name' | 'size' | 'lastModified' | 'headHash'>;

/**
 * Issue 11 item 2: the same file picked again is the one with the same name, size, last
 * modification time and first bytes. (A whole-file hash would mean reading gigabytes before
 * the upload can go on.)
 */
export async function fingerprintOf(file: Blob & { name: string; lastModified?: number }): Promise<Fingerprint> {
  const head = await file.slice(0, Math.min(file.size, HEAD_BYTES)).arrayBuffer();
  return { name: file.name, size: file.size, lastModified: file.lastModified ?? 0, headHash: await sha256Hex(head) };
}

export function sameFile(record: Fingerprint, picked: Fingerprint): boolean {
  return record.name === picked.name && record.size === picked.size && record.lastModified === picked.lastModified && record.headHash === picked.headHash;
}
