import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SHARE_FAILED_REDIRECT, SHARE_NONE_REDIRECT, SHARE_TARGET_PATH } from '../../contract/site-routes.ts';

/**
 * The most of a share's body read to tell whether it carried a file. A file's part headers come
 * in its first bytes, and a share with no file (only a text or a link) is far smaller. A body
 * that goes past this without a file gets the answer for a file, as every share got before, so
 * a request nobody signed cannot keep the site reading.
 */
export const SHARE_READ_LIMIT = 64 * 1024;

/**
 * A share from another app reaches the server only when no service worker took it (the app's
 * storage cleared while it stayed installed, a worker not yet active). Its files cannot be kept
 * here, because the session lives on the device. So the app is opened where it tells the user to
 * pick them instead (`shared=failed`), rather than a bare 404. A share that brought no file gets
 * the service worker's answer for that, `shared=none` (src/sw/share-target.ts): "nothing was
 * shared", not a request to pick files that never came. Only enough of the body is read to
 * tell which: up to the first file's part headers. http/early-answer.ts closes the connection
 * gently on the rest.
 */
export async function registerShareFallback(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  await app.register(multipart, {
    // As FormData reads the body for the service worker: a part is a file when it has a filename.
    isPartAFile: (_field, _type, filename) => filename !== undefined,
    limits: { fieldNameSize: 100, fieldSize: SHARE_READ_LIMIT, fields: 32, parts: 64, headerPairs: 100 },
  });
  app.post(SHARE_TARGET_PATH, async (request, reply) => reply.redirect((await mayHaveCarriedAFile(request)) ? SHARE_FAILED_REDIRECT : SHARE_NONE_REDIRECT, 303));
}

/**
 * False only when the share surely carried no file. The service worker answers a body it cannot
 * read as a form with `shared=failed` too. A URL-encoded form can hold no file. A multipart
 * one is read until its first file, the end, a parser error or SHARE_READ_LIMIT bytes.
 */
async function mayHaveCarriedAFile(request: FastifyRequest): Promise<boolean> {
  if (!request.isMultipart()) return mediaType(request) !== 'application/x-www-form-urlencoded';
  // Started first: the parser is piped the body before the count below listens to it.
  const found = firstFileIn(request).catch(() => true);
  const limit = readPast(request.raw, SHARE_READ_LIMIT);
  try {
    return await Promise.race([found, limit.passed]);
  } finally {
    limit.stop();
  }
}

/** Whether a part holds a file as the service worker counts them (src/sw/share-target.ts). */
async function firstFileIn(request: FastifyRequest): Promise<boolean> {
  for await (const part of request.parts()) {
    if (part.type !== 'file') continue;
    // A file input with nothing chosen sends a part with no name and no bytes: not a file.
    if (part.fieldname === 'file' && (part.filename !== '' || (await hasBytes(part.file)))) return true;
    // The service worker reads only the manifest's field; the parser goes on once this is drained.
    part.file.resume();
  }
  return false;
}

async function hasBytes(stream: Readable): Promise<boolean> {
  for await (const chunk of stream) if ((chunk as Buffer).length > 0) return true;
  return false;
}

/** `passed` resolves true once more than `limit` bytes of the body have come. */
function readPast(raw: IncomingMessage, limit: number): { passed: Promise<true>; stop: () => void } {
  let read = 0;
  let onData: (chunk: Buffer) => void = () => {};
  const passed = new Promise<true>((resolve) => {
    onData = (chunk) => {
      read += chunk.length;
      if (read > limit) resolve(true);
    };
  });
  raw.on('data', onData);
  return { passed, stop: () => raw.off('data', onData) };
}

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
}
