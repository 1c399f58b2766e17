/**
 * The upload protocol's plain values, apart from the schemas in files.ts: the web app, its upload
 * worker and its service worker need these at run time, and importing them from files.ts put the
 * schema library and every file schema into those three bundles (contract/README.md).
 */

/** Spec §9: every chunk but the last is exactly this many bytes. */
export const CHUNK_SIZE = 83_886_080;

/** Spec §7 `files/upload`, multipart (its schemas: `filesUpload` in files.ts). */
export const FILES_UPLOAD_PATH = '/api/v1/files/upload';

/**
 * `files/upload` is multipart, so its fields are checked by hand on the server; these are the
 * names (spec §7 plus the resume extensions of design §7).
 */
export const UPLOAD_FIELDS = {
  token: 'token',
  originalname: 'originalname',
  totalChunks: 'totalChunks',
  chunkIndex: 'chunkIndex',
  uploadId: 'uploadId',
  fileSize: 'fileSize',
  chunkHash: 'chunkHash',
  chunkOffset: 'chunkOffset',
  file: 'file',
} as const;
