import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ACTUAL_NAME_PATTERN } from '../modules/files/file-kind.ts';
import { findFileByActualName } from '../modules/files/files.repository.ts';
import { contentDisposition, isActiveType, parseRange } from './http-headers.ts';
import { registerPreviewRoute } from './previews-route.ts';

// Design §8: files never change under a name, so caches may keep them for a year.
const CACHE_CONTROL = 'public, max-age=31536000, immutable';
// Nothing a stored file contains may run script or load from elsewhere, even when opened directly.
const CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/** `GET`/`HEAD /<actual_name>` (design §8). */
export async function registerFilesHost(app: FastifyInstance, deps: Deps): Promise<void> {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/:name',
    exposeHeadRoute: false,
    handler: (request: FastifyRequest<{ Params: { name: string } }>, reply) => serveFile(deps, request, reply),
  });
  registerPreviewRoute(app, deps);
}

async function serveFile(deps: Deps, request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) {
  const name = request.params.name;
  // Not one of our names: answered without a database or disk lookup.
  if (!ACTUAL_NAME_PATTERN.test(name)) return notFound(reply);
  const file = await findFileByActualName(deps.db, name);
  if (!file) return notFound(reply);

  const etag = `"${file.storage_key}"`;
  const lastModified = new Date(file.time_created * 1000).toUTCString();
  const active = isActiveType(file.mime_type);
  void reply
    .header('cache-control', CACHE_CONTROL)
    .header('etag', etag)
    .header('last-modified', lastModified)
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', CSP)
    .header('cross-origin-resource-policy', 'cross-origin')
    // Active types keep their real type but are only ever downloaded (design §8).
    .header('content-disposition', contentDisposition(active ? 'attachment' : 'inline', file.original_name))
    .header('content-type', file.mime_type.startsWith('text/') ? `${file.mime_type}; charset=utf-8` : file.mime_type);

  if (notModified(request, etag, file.time_created)) return reply.status(304).send();

  const size = file.size;
  const ifRange = request.headers['if-range'];
  const rangeHeader = ifRange === undefined || ifRange === etag ? request.headers.range : undefined;
  const range = parseRange(rangeHeader, size);
  if (range === 'unsatisfiable') {
    return reply.status(416).header('content-range', `bytes */${size}`).type('application/json').send({ success: false, error: 'Requested range not satisfiable.' });
  }
  if (range) {
    void reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`).header('content-length', range.end - range.start + 1);
  } else {
    void reply.status(200).header('content-length', size);
  }
  if (request.method === 'HEAD') return reply.send();
  if (size === 0) return reply.send('');
  return reply.send(deps.storage.read(file.storage_key, range ?? undefined));
}

function notModified(request: FastifyRequest, etag: string, timeCreated: number): boolean {
  const inm = request.headers['if-none-match'];
  if (inm !== undefined) {
    // If-None-Match wins over If-Modified-Since when both are sent (RFC 9110 §13.2.2).
    return inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  }
  const ims = request.headers['if-modified-since'];
  if (ims) {
    const since = Date.parse(ims);
    return Number.isFinite(since) && Math.floor(since / 1000) >= timeCreated;
  }
  return false;
}

function notFound(reply: FastifyReply) {
  return reply.status(404).header('cache-control', 'no-store').send({ success: false, error: 'Not found.' });
}
