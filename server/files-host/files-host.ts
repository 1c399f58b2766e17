import fs from 'node:fs';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ACTUAL_NAME_PATTERN } from '../modules/files/file-kind.ts';
import { findFileByActualName } from '../modules/files/files.repository.ts';
import { contentDisposition, isActiveType, parseRange } from './http-headers.ts';
import { registerPreviewRoute } from './previews-route.ts';
import { FileMetaCache, SMALL_BODY, type FileMeta } from './file-meta-cache.ts';

// Design §8: files never change under a name, so caches may keep them for a year.
const CACHE_CONTROL = 'public, max-age=31536000, immutable';
// Nothing a stored file contains may run script or load from elsewhere, even when opened directly.
const CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/** `GET`/`HEAD /<actual_name>` (design §8). */
export async function registerFilesHost(app: FastifyInstance, deps: Deps): Promise<void> {
  const cache = new FileMetaCache();
  app.route({
    method: ['GET', 'HEAD'],
    url: '/:name',
    exposeHeadRoute: false,
    handler: (request: FastifyRequest<{ Params: { name: string } }>, reply) => serveFile(deps, cache, request, reply),
  });
  registerPreviewRoute(app, deps);
}

async function lookUp(deps: Deps, cache: FileMetaCache, name: string): Promise<FileMeta | undefined> {
  const file = await findFileByActualName(deps.db, name);
  if (!file) return undefined;
  const etag = `"${file.storage_key}"`;
  const active = isActiveType(file.mime_type);
  const meta: FileMeta = {
    storageKey: file.storage_key,
    size: file.size,
    timeCreated: file.time_created,
    etag,
    headers: {
      'cache-control': CACHE_CONTROL,
      etag,
      'last-modified': new Date(file.time_created * 1000).toUTCString(),
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'content-security-policy': CSP,
      'cross-origin-resource-policy': 'cross-origin',
      // Active types keep their real type but are only ever downloaded (design §8).
      'content-disposition': contentDisposition(active ? 'attachment' : 'inline', file.original_name),
      'content-type': file.mime_type.startsWith('text/') ? `${file.mime_type}; charset=utf-8` : file.mime_type,
    },
  };
  cache.set(name, meta);
  return meta;
}

async function serveFile(deps: Deps, cache: FileMetaCache, request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) {
  const name = request.params.name;
  // Not one of our names: answered without a database or disk lookup.
  if (!ACTUAL_NAME_PATTERN.test(name)) return notFound(reply);
  const cached = cache.get(name);
  const meta = cached ?? (await lookUp(deps, cache, name));
  if (!meta) return notFound(reply);
  const answer = await answerFor(deps, cache, name, meta, request);
  if (answer === 'gone') {
    // Deleted since it was cached (here or by another process): ask the database once more.
    cache.delete(name);
    const fresh = cached ? await lookUp(deps, cache, name) : undefined;
    const retry = fresh ? await answerFor(deps, cache, name, fresh, request) : 'gone';
    if (retry === 'gone') return notFound(reply);
    return send(reply, fresh!, retry);
  }
  return send(reply, meta, answer);
}

type Answer =
  | { status: 304 }
  | { status: 416 }
  | { status: 200 | 206; range: { start: number; end: number } | null; body: Readable | Buffer | null };

/** What to answer, after making sure the stored object is still there (it is gone once deleted). */
async function answerFor(deps: Deps, cache: FileMetaCache, name: string, meta: FileMeta, request: FastifyRequest): Promise<Answer | 'gone'> {
  const conditional = notModified(request, meta.etag, meta.timeCreated);
  const ifRange = request.headers['if-range'];
  const range = conditional ? null : parseRange(ifRange === undefined || ifRange === meta.etag ? request.headers.range : undefined, meta.size);
  const kept = meta.body;
  if (conditional || range === 'unsatisfiable' || request.method === 'HEAD' || meta.size === 0 || kept) {
    if (!(await deps.storage.stat(meta.storageKey))) return 'gone';
    if (conditional) return { status: 304 };
    if (range === 'unsatisfiable') return { status: 416 };
    const body = request.method === 'HEAD' || !kept ? null : range ? kept.subarray(range.start, range.end + 1) : kept;
    return { status: range ? 206 : 200, range, body };
  }
  if (meta.size <= SMALL_BODY) {
    // Read whole once; later requests answer from memory after a stat.
    try {
      const whole = await buffer(deps.storage.read(meta.storageKey));
      cache.keepBody(name, whole);
      return { status: range ? 206 : 200, range, body: range ? whole.subarray(range.start, range.end + 1) : whole };
    } catch (err) {
      if (!(await deps.storage.stat(meta.storageKey))) return 'gone';
      throw err;
    }
  }
  const body = deps.storage.read(meta.storageKey, range ?? undefined);
  if (body instanceof fs.ReadStream) {
    // Local disk: opening the file is the existence check, and costs nothing extra.
    try {
      await once(body, 'ready');
    } catch {
      body.destroy();
      return 'gone';
    }
  }
  return { status: range ? 206 : 200, range, body };
}

function send(reply: FastifyReply, meta: FileMeta, answer: Answer) {
  void reply.headers(meta.headers);
  if (answer.status === 304) return reply.status(304).send();
  if (answer.status === 416) {
    return reply.status(416).header('content-range', `bytes */${meta.size}`).type('application/json').send({ success: false, error: 'Requested range not satisfiable.' });
  }
  const { range, body } = answer;
  if (range) void reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${meta.size}`).header('content-length', range.end - range.start + 1);
  else void reply.status(200).header('content-length', meta.size);
  if (!body) return reply.send(meta.size === 0 && answer.status === 200 ? '' : undefined);
  return reply.send(body);
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
