import crypto from 'node:crypto';
import { CHUNK_SIZE } from '../contract/files.ts';

/** Deterministic pseudo-random bytes: incompressible, reproducible, cheap to make. */
export function chunkBytes(seed: number, index: number, size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  const block = crypto.createHash('sha256').update(`${seed}:${index}`).digest();
  // Fill with a repeated hash block mixed with the position: fast and not trivially compressible.
  for (let i = 0; i < size; i += 32) out.set(i + 32 <= size ? block : block.subarray(0, size - i), i);
  for (let i = 0; i < size; i += 4096) out[i] = (i / 4096) & 0xff;
  return out;
}

/** Uploads `size` bytes as spec §7 chunks with design §7's resume fields; resolves with the file url. */
export async function uploadFile(apiUrl: string, token: string, size: number, seed: number, name = `bench-${seed}.bin`): Promise<string> {
  const totalChunks = Math.max(1, Math.ceil(size / CHUNK_SIZE));
  const uploadId = crypto.randomUUID();
  let url = '';
  for (let index = 0; index < totalChunks; index++) {
    const length = Math.min(CHUNK_SIZE, size - index * CHUNK_SIZE);
    const bytes = chunkBytes(seed, index, length);
    const form = new FormData();
    form.set('token', token);
    form.set('uploadId', uploadId);
    form.set('originalname', name);
    form.set('totalChunks', String(totalChunks));
    form.set('chunkIndex', String(index));
    form.set('fileSize', String(size));
    form.set('chunkHash', crypto.createHash('sha256').update(bytes).digest('hex'));
    form.set('file', new Blob([bytes], { type: 'application/octet-stream' }), name);
    const res = await fetch(`${apiUrl}/api/v1/files/upload`, { method: 'POST', body: form });
    const body = (await res.json()) as { success: boolean; url?: string; error?: unknown };
    if (!res.ok || !body.success) throw new Error(`chunk ${index} refused: ${res.status} ${JSON.stringify(body)}`);
    if (body.url) url = body.url;
  }
  return url;
}
