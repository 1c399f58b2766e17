import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart, { type Multipart } from '@fastify/multipart';
import { UPLOAD_FIELDS, filesUpload, type UploadChunkResponse, type UploadDoneResponse } from '../../../contract/files.ts';
import type { Deps } from '../../deps.ts';
import { badRequest, unauthorized } from '../../http/errors.ts';
import { authorize, bearerOf, credentialOf, type RouteOptions } from '../../http/route.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { cleanOriginalName } from './file-kind.ts';
import { multipartParts } from './multipart-parts.ts';
import { parseChunkHash, parseUploadFields } from './upload-fields.ts';
import { assertUploadsOpen, dropStaged, finishStaged, receiveChunk, stageWhole, type Staged } from './upload.service.ts';

const ACCESS: RouteOptions = { access: 'user', apiKey: true };

/**
 * What the multipart parser queues of the body, and of the file part it hands on (issue 9): 256
 * KiB rather than the 16 KiB default, so an 80 MB chunk costs a few hundred stream hops instead
 * of thousands, while an upload waiting on its disk holds little (each buffer is held once per
 * running upload). The plugin drops both when a connection ends early, so these bytes are the
 * ones a cut upload may have to send again: tests/e2e/pwa.e2e.ts bounds a cut by them.
 */
export const PARSER_BUFFER_BYTES = 256 * 1024;

/**
 * How long the rest of a body is waited for once its file is stored and listed. A well-formed
 * body's closing boundary comes with the file's last bytes, and nothing after a placed file
 * changes the answer; but the parser only ends with the body, so a client whose Content-Length
 * promised more than it sent had its file listed and then got 408 from the body-rate guard —
 * and, retrying, listed it twice. Past this wait the answer goes out and the connection closes.
 */
export const TRAILING_PARTS_WAIT_MS = 2_000;

/**
 * `files/upload` (spec §7, design §7). Multipart bodies are read part by part and the file part
 * is streamed straight into storage, never buffered. Text fields normally come first (our
 * client sends them so); when no chunk fields come before the file part it is staged whole and
 * placed once the trailing fields are known — finalized in place for a whole file, copied once
 * for a chunk.
 * Bytes are only ever written for a known caller: a file part before any credential (no
 * `Authorization: Bearer`, no `token` field yet) is refused with 401.
 */
export async function registerUploadRoute(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(multipart, {
    // Sizes are bounded by our own byte counting (max_file_size is a live setting), the rest here.
    limits: { fieldNameSize: 64, fieldSize: 4096, fields: 16, files: 1, parts: 20, headerPairs: 100, fileSize: Number.MAX_SAFE_INTEGER },
    throwFileSizeLimit: false,
    fileHwm: PARSER_BUFFER_BYTES,
    highWaterMark: PARSER_BUFFER_BYTES,
  });

  app.post(
    filesUpload.path,
    {
      // Design §5: 401/403/503 before anything is read from the body.
      preValidation: async (request) => {
        const bearer = bearerOf(request);
        if (bearer) request.caller = await authorize(deps, bearer, ACCESS);
      },
    },
    // Refused midway through a body, or parts after a placed file left unread (see handleUpload):
    // the connection is closed rather than the rest read (http/early-answer.ts).
    async (request) => handleUpload(deps, request),
  );
}

async function handleUpload(deps: Deps, request: FastifyRequest): Promise<UploadChunkResponse | UploadDoneResponse> {
  if (!request.isMultipart()) {
    // Design §5: a missing credential is a 401 even when the body is wrong too.
    if (!request.caller) await authorize(deps, credentialOf(request), ACCESS);
    throw badRequest('files/upload takes multipart/form-data with the chunk in a part named "file".');
  }
  const fields = new Map<string, string>();
  let result: UploadChunkResponse | UploadDoneResponse | null = null;
  let staged: Staged | null = null;
  let caller: Caller | null = request.caller;
  /** The staged file's name came before its bytes: without chunk fields after them, a whole file. */
  let namedFirst = false;
  try {
    const parts = multipartParts(request);
    for (;;) {
      let next: IteratorResult<Multipart>;
      try {
        // A whole file named first is complete as far as the spec's fields go: the rest of its
        // body is waited for as after a placed file, and garbage there changes nothing.
        next = staged && namedFirst ? await nextWithin(parts, TRAILING_PARTS_WAIT_MS) : await parts.next();
      } catch (error) {
        if (staged && namedFirst) break;
        throw error;
      }
      if (next.done) break;
      const part = next.value;
      if (part.type === 'field') {
        if (fields.has(part.fieldname)) throw badRequest(`Field '${part.fieldname}' is sent twice.`);
        fields.set(part.fieldname, String(part.value));
        continue;
      }
      if (part.fieldname !== UPLOAD_FIELDS.file) throw badRequest(`The file part must be named '${UPLOAD_FIELDS.file}'.`);
      if (!caller) {
        const token = fields.get(UPLOAD_FIELDS.token);
        if (!token) throw unauthorized('Send the token field before the file part, or use an Authorization: Bearer header.');
        request.caller = await authorize(deps, token, ACCESS);
        caller = request.caller;
      }
      if (!caller) throw unauthorized();
      await assertUploadsOpen(deps);
      const parsed = parseUploadFields(fields);
      const name = cleanOriginalName(parsed.originalname ?? part.filename);
      if (!parsed.chunk) {
        // No chunk fields yet: they may follow the file part (design §7), so the bytes are
        // staged and placed once the body has said what they are. Listed at once, a chunk whose
        // fields came last was a whole file of its first 80 MB.
        staged = await stageWhole(deps, caller, name, part.file);
        namedFirst = parsed.originalname !== null;
        continue;
      }
      // The rest of the body, read once: by receiveChunk before it records a chunk whose
      // chunkHash may follow its bytes (design §7 lets fields follow the file part), else here.
      let rest: Promise<Map<string, string>> | undefined;
      const restOfBody = () => (rest ??= fieldsAfterPlacedFile(parts));
      const hashAfter = parsed.chunkHash === null ? async () => parseChunkHash((await restOfBody()).get(UPLOAD_FIELDS.chunkHash) ?? '') : undefined;
      result = await receiveChunk(deps, caller, { ...parsed, chunk: parsed.chunk }, name, part.file, hashAfter);
      await restOfBody();
      break;
    }
    if (staged && caller) {
      const parsed = parseUploadFields(fields);
      const name = parsed.originalname !== null ? cleanOriginalName(parsed.originalname) : undefined;
      if (!parsed.chunk) {
        const done = await finishStaged(deps, caller, staged, { originalName: name, chunkHash: parsed.chunkHash });
        staged = null;
        return done;
      }
      const copy = deps.storage.readUnfinished(staged.upload.storage_key, 0, staged.size);
      return await receiveChunk(deps, caller, { ...parsed, chunk: parsed.chunk }, name ?? staged.upload.original_name, copy);
    }
  } finally {
    if (staged) await dropStaged(deps, staged);
  }
  if (!result) {
    if (!caller) await authorize(deps, fields.get(UPLOAD_FIELDS.token) ?? null, ACCESS);
    throw badRequest(`Missing the file part '${UPLOAD_FIELDS.file}'.`);
  }
  return result;
}

/**
 * The fields after a placed file, the first value of each: read until the body ends, or until
 * none comes within TRAILING_PARTS_WAIT_MS (a client whose Content-Length promised more). In a
 * well-formed body they come with the file's last bytes. Garbage after the file (a second file
 * part, a part over the limits, a cut-off tail) ends the reading: the parser throws, and the
 * answer is the stored file rather than an error for a file that exists. Only a chunk's
 * `chunkHash` among them is used (receiveChunk); the rest change nothing.
 */
async function fieldsAfterPlacedFile(parts: AsyncGenerator<Multipart>): Promise<Map<string, string>> {
  const fields = new Map<string, string>();
  for (;;) {
    let next: IteratorResult<Multipart>;
    try {
      next = await nextWithin(parts, TRAILING_PARTS_WAIT_MS);
    } catch {
      break;
    }
    if (next.done) break;
    // The parser allows one file part, so a second one throws above and only fields come here.
    const part = next.value;
    if (part.type === 'field' && !fields.has(part.fieldname)) fields.set(part.fieldname, String(part.value));
  }
  return fields;
}

/** The body's next part, or its end if none comes within `ms` (the rest is left unread). */
async function nextWithin(parts: AsyncGenerator<Multipart>, ms: number): Promise<IteratorResult<Multipart>> {
  const next = parts.next();
  // Left behind when the wait wins, it fails once the connection is cut: nobody is listening.
  next.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<IteratorResult<Multipart>>((resolve) => {
    timer = setTimeout(() => resolve({ done: true, value: undefined }), ms);
  });
  try {
    return await Promise.race([next, waited]);
  } finally {
    clearTimeout(timer);
  }
}
