import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ACTUAL_NAME_PATTERN } from '../modules/files/file-kind.ts';
import { findFileByActualName } from '../modules/files/files.repository.ts';
import { parsePreviews, previewKey } from '../modules/media/previews.ts';
import { stillStored } from '../storage/storage.ts';

// Design §8's headers, as for the files themselves: a preview never changes under its key.
const CACHE_CONTROL = 'public, max-age=31536000, immutable';
const CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";
const PREVIEW_FILE = /^([1-9]\d{0,3})\.webp$/;

type PreviewRequest = FastifyRequest<{ Params: { name: string; file: string } }>;

/** `GET`/`HEAD /_p/<actual_name>/<width>.webp`: a file's WebP preview (issue 11 item 9). */
export function registerPreviewRoute(app: FastifyInstance, deps: Deps): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/_p/:name/:file',
    exposeHeadRoute: false,
    handler: (request: PreviewRequest, reply) => servePreview(deps, request, reply),
  });
}

async function servePreview(deps: Deps, request: PreviewRequest, reply: FastifyReply) {
  const { name, file } = request.params;
  const width = PREVIEW_FILE.exec(file)?.[1];
  // Not one of our names: answered without a database or storage lookup.
  if (!ACTUAL_NAME_PATTERN.test(name) || !width) return notFound(reply);
  const row = await findFileByActualName(deps.db, name);
  const preview = row ? parsePreviews(row.previews).find((p) => p.width === Number(width)) : undefined;
  if (!row || !preview) return notFound(reply);

  const key = previewKey(row.storage_key, preview);
  const etag = `"${key}"`;
  const inm = request.headers['if-none-match'];
  const notModified = inm !== undefined && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  const bodiless = notModified || request.method === 'HEAD';
  // The row was read before the stored preview is opened: a file deleted in between (its row,
  // then its bytes) is a 404, as on the files route, not a failing store's 500.
  const body = bodiless ? null : await deps.storage.openRead(key);
  if (bodiless ? !(await stillStored(deps.storage, key)) : !body) return notFound(reply);
  void reply
    .header('cache-control', CACHE_CONTROL)
    .header('etag', etag)
    .header('last-modified', new Date(row.time_created * 1000).toUTCString())
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', CSP)
    .header('cross-origin-resource-policy', 'cross-origin')
    .header('content-type', 'image/webp');
  if (notModified) return reply.status(304).send();
  void reply.status(200).header('content-length', preview.bytes);
  return reply.send(body ?? undefined);
}

function notFound(reply: FastifyReply) {
  return reply.status(404).header('cache-control', 'no-store').send({ success: false, error: 'Not found.' });
}
