import { Type, type Static } from 'typebox';
import { Body, Filter, Ok, Page, PageSize, SuccessMessage, Token, endpoint } from './common.ts';
import { FILES_UPLOAD_PATH } from './upload-fields.ts';

export { CHUNK_SIZE, UPLOAD_FIELDS } from './upload-fields.ts';

/** Spec §3 File. width/height are null when they cannot be read from the bytes. */
export const File = Type.Object({
  url: Type.String(),
  actual_name: Type.String(),
  original_name: Type.String(),
  username: Type.String(),
  size: Type.Number(),
  time_created: Type.Number(),
  width: Type.Union([Type.Number(), Type.Null()]),
  height: Type.Union([Type.Number(), Type.Null()]),
  mime_type: Type.String(),
  /**
   * WebP previews on the files host (issue 11 item 9), narrowest first, widths at most
   * 160/320/640 and never wider than the image; empty while none exist (not an image, or not
   * made yet). Clients build `srcset` from it.
   */
  previews: Type.Array(Type.Object({ width: Type.Integer(), height: Type.Integer(), url: Type.String() })),
});
export type FileRecord = Static<typeof File>;

export const FileSort = Type.Optional(
  Type.Union([Type.Literal('newest'), Type.Literal('oldest'), Type.Literal('largest'), Type.Literal('smallest')]),
);
export type FileSort = Static<typeof FileSort>;

export const FileList = Type.Object({ success: Ok, files: Type.Array(File), totalImages: Type.Integer() });

export const filesUpload = {
  path: FILES_UPLOAD_PATH,
  /** Answer to a chunk that is not the last one to arrive. */
  chunkResponse: Type.Object({ success: Ok, received: Type.Array(Type.Integer()), totalChunks: Type.Integer() }),
  /** Answer once every byte is stored: the file is listed. */
  doneResponse: Type.Object({ success: Ok, url: Type.String(), file: File }),
};
export type UploadChunkResponse = Static<typeof filesUpload.chunkResponse>;
export type UploadDoneResponse = Static<typeof filesUpload.doneResponse>;

const UploadId = Type.String({ format: 'uuid', maxLength: 36 });

export const filesUploadStatus = endpoint(
  '/api/v1/files/upload/status',
  Body({ token: Token, uploadId: UploadId }),
  Type.Object({
    success: Ok,
    totalChunks: Type.Integer(),
    received: Type.Array(Type.Integer()),
    partial: Type.Union([Type.Object({ chunkIndex: Type.Integer(), bytes: Type.Integer() }), Type.Null()]),
    // An upload already finished: the file it became (its last chunk's answer, sent again).
    url: Type.Optional(Type.String()),
    file: Type.Optional(File),
  }),
);
export type UploadStatus = Static<typeof filesUploadStatus.response>;

export const filesUploadCancel = endpoint(
  '/api/v1/files/upload/cancel',
  Body({ token: Token, uploadId: UploadId }),
  Type.Object({ success: Ok }),
);

export const filesUploadUrl = endpoint(
  '/api/v1/files/upload-url',
  Body({ token: Token, url: Type.String({ minLength: 1, maxLength: 2048 }) }),
  Type.Object({ success: Ok, url: Type.String(), file: File, message: Type.Optional(Type.String()) }),
);

export const filesUploaded = endpoint(
  '/api/v1/files/uploaded',
  Body({
    token: Token,
    page: Page,
    pageSize: PageSize,
    filters: Type.Optional(Type.Object({ name: Filter }, { additionalProperties: false })),
    sort: FileSort,
  }),
  FileList,
);

/** `filePath` is a url or name; only its last path segment is used (never a path on disk). */
export const filesDelete = endpoint(
  '/api/v1/files/delete',
  Body({ token: Token, filePath: Type.String({ minLength: 1, maxLength: 2048 }) }),
  SuccessMessage,
);
