import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { HttpError, badRequest } from '../../http/errors.ts';
import { claimBodyPieces } from '../../lib/body-pieces.ts';

const LIMIT_MESSAGES: Record<string, string> = {
  FST_PARTS_LIMIT: 'The upload has too many parts.',
  FST_FILES_LIMIT: "Send one file part named 'file' per request.",
  FST_FIELDS_LIMIT: 'The upload has too many fields.',
  FST_PROTO_VIOLATION: 'A field name is not allowed.',
};

/**
 * Anything the multipart parser throws was caused by the bytes the client sent: a missing or
 * wrong boundary, a cut-off part, a limit, a dropped connection. Design §5 makes all of those a
 * 4xx with a message, never the 500 an unknown error would become.
 */
export function multipartClientError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const known = LIMIT_MESSAGES[code];
  const status = typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 400;
  if (known) return new HttpError(status, known);
  const detail = typeof e.message === 'string' && e.message ? ` (${e.message.replace(/\.$/, '')})` : '';
  return badRequest(`The multipart body is malformed${detail}.`);
}

/** `request.parts()`, with every parser failure turned into a client error. */
export async function* multipartParts(request: FastifyRequest): AsyncGenerator<Multipart> {
  let iterator: AsyncIterator<Multipart>;
  let claimed = false;
  try {
    iterator = request.parts()[Symbol.asyncIterator]();
  } catch (err) {
    throw multipartClientError(err);
  }
  for (;;) {
    let step: IteratorResult<Multipart>;
    try {
      step = await iterator.next();
    } catch (err) {
      throw multipartClientError(err);
    }
    if (step.done) return;
    // The parser reads the body from the first part on; the file's pieces may be freed once stored.
    if (!claimed) {
      claimBodyPieces(request.raw);
      claimed = true;
    }
    yield step.value;
  }
}
