import { UPLOAD_FIELDS } from '../../../contract/files.ts';
import { badRequest } from '../../http/errors.ts';

/** The text fields of one `files/upload` request, checked (multipart bodies skip ajv). */
export interface UploadFields {
  token: string | null;
  originalname: string | null;
  /** Present together with chunkIndex, or neither (a whole file in one request, design §7). */
  chunk: {
    totalChunks: number;
    chunkIndex: number;
    uploadId: string | null;
    chunkOffset: number;
  } | null;
  fileSize: number | null;
  chunkHash: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SHA256_HEX = /^[0-9a-f]{64}$/i;
const KNOWN = new Set<string>(Object.values(UPLOAD_FIELDS));

function integer(raw: string | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | null {
  if (raw === undefined || raw === '') return null;
  if (!/^\d{1,16}$/.test(raw)) throw badRequest(`Field '${name}' must be a whole number.`);
  const n = Number(raw);
  if (n < min || n > max) throw badRequest(`Field '${name}' must be between ${min} and ${max}.`);
  return n;
}

export function parseUploadFields(raw: Map<string, string>): UploadFields {
  for (const name of raw.keys()) {
    if (!KNOWN.has(name)) throw badRequest(`Unknown field '${name}'.`);
  }
  const totalChunks = integer(raw.get(UPLOAD_FIELDS.totalChunks), 'totalChunks', 1, 1_000_000);
  const chunkIndex = integer(raw.get(UPLOAD_FIELDS.chunkIndex), 'chunkIndex', 0, 1_000_000);
  if ((totalChunks === null) !== (chunkIndex === null)) {
    throw badRequest("Fields 'totalChunks' and 'chunkIndex' go together: send both or neither.");
  }
  const uploadId = raw.get(UPLOAD_FIELDS.uploadId) || null;
  if (uploadId !== null && !UUID.test(uploadId)) throw badRequest("Field 'uploadId' must be a UUID.");
  const chunkHash = parseChunkHash(raw.get(UPLOAD_FIELDS.chunkHash) ?? '');
  const chunkOffset = integer(raw.get(UPLOAD_FIELDS.chunkOffset), 'chunkOffset', 0) ?? 0;
  if (totalChunks === null && (uploadId !== null || chunkOffset > 0)) {
    throw badRequest("Fields 'uploadId' and 'chunkOffset' need 'totalChunks' and 'chunkIndex'.");
  }
  if (totalChunks !== null && chunkIndex !== null && chunkIndex >= totalChunks) {
    throw badRequest(`Chunk index ${chunkIndex} is out of range: this upload has ${totalChunks} chunks (0 to ${totalChunks - 1}).`);
  }
  const originalname = raw.get(UPLOAD_FIELDS.originalname) ?? null;
  if (originalname !== null && originalname.length > 1024) throw badRequest("Field 'originalname' must be at most 1024 characters.");
  return {
    token: raw.get(UPLOAD_FIELDS.token) || null,
    originalname,
    chunk: totalChunks !== null && chunkIndex !== null ? { totalChunks, chunkIndex, uploadId, chunkOffset } : null,
    fileSize: integer(raw.get(UPLOAD_FIELDS.fileSize), 'fileSize', 0),
    chunkHash,
  };
}

/** A `chunkHash` field's value, lower-cased; an empty one is none (null), anything else not hex is refused. */
export function parseChunkHash(raw: string): string | null {
  if (raw === '') return null;
  if (!SHA256_HEX.test(raw)) throw badRequest("Field 'chunkHash' must be a SHA-256 in hex.");
  return raw.toLowerCase();
}
