import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ACTUAL_NAME_PATTERN } from '../modules/files/file-kind.ts';
import { findFileByActualName } from '../modules/files/files.repository.ts';
import { onFilesGone } from '../modules/files/files-gone.ts';
import { contentDisposition, isActiveType, parseRange } from './http-headers.ts';
import { accelTarget, registerMissingLocationGuard, signedAccelTarget, type HandOver } from './accel-redirect.ts';
import { registerPreviewRoute } from './previews-route.ts';
import { FileMetaCache, SMALL_BODY, type FileMeta } from './file-meta-cache.ts';
import { sendFile } from './send-file.ts';
import { stillStored } from '../storage/storage.ts';
import type { FilesIpLimiter, LimitDecision } from './ip-limiter.ts';

// Design §8: files never change under a name, so caches may keep them for a year.
const CACHE_CONTROL = 'public, max-age=31536000, immutable';
// Nothing a stored file contains may run script or load from elsewhere, even when opened directly.
const CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/** Levels at which Fastify logs every request. */
const REQUEST_LOG_LEVELS = new Set(['trace', 'debug', 'info']);

/** What the files host keeps between requests: the metadata cache, the rows being read, and whether it is closing. */
export interface FilesHost {
  cache: FileMetaCache;
  /** One read of a name's row at a time: the requests that come while it runs share it. */
  reading: Map<string, Promise<FileMeta | undefined>>;
  closing: boolean;
}

export function createFilesHost(): FilesHost {
  return { cache: new FileMetaCache(), reading: new Map(), closing: false };
}

/** `GET`/`HEAD /<actual_name>` (design §8). */
export async function registerFilesHost(app: FastifyInstance, deps: Deps, host: FilesHost = createFilesHost()): Promise<void> {
  // A file deleted (or an account hidden) in this process is not served from memory a moment
  // longer, even when its bytes stay; a read of its row under way then is not joined either.
  const forget = onFilesGone(deps.db, (gone) => {
    host.cache.forget(gone);
    host.reading.clear();
  });
  app.addHook('onClose', (_app, done) => {
    forget();
    done();
  });
  // From here on the fast path leaves every request to Fastify, which answers 503 while closing.
  app.addHook('preClose', (done) => {
    host.closing = true;
    done();
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/:name',
    exposeHeadRoute: false,
    handler: (request: FastifyRequest<{ Params: { name: string } }>, reply) => serveFile(deps, host, request, reply),
  });
  registerPreviewRoute(app, deps);
  const prefix = deps.config.filesAccelRedirect;
  if (prefix) {
    registerMissingLocationGuard(app, prefix);
    // The one thing nginx's configuration must get right by hand: which origin it proxies to,
    // under which host name (the reads are signed for it).
    if (deps.storage.signedRead) {
      const origin = new URL((await deps.storage.signedRead('origin-probe')).origin);
      app.log.info(
        `downloads are handed to nginx: its internal location ${prefix} must proxy to ${origin.origin}/ with Host ${origin.host} (README, "Deployment at scale": upstream stash_s3)`,
      );
    }
  }
}

/**
 * Issue 9, serving like a static server: a request for a file already in the cache is answered
 * here, before Fastify's routing, hooks and reply, with the very headers serveFile sends (design
 * §8): from memory (a kept small body, `HEAD`, a 304, an empty file) or, on a store that reads
 * local files, streamed straight from disk (a Range as cheap as on a static server). The stored
 * object's existence is still checked on every request, so a delete by any process is seen at
 * once; one whose bytes stay is seen at once in this process and within TRUST_MS in any other
 * (file-meta-cache.ts: past it, the name goes to Fastify, which reads the row again). Anything
 * else (unknown or uncached names, an entry past TRUST_MS, 416, a query string, a body, a remote store,
 * a stored file that cannot be opened right now, a server closing, an address past its rate
 * limit) returns false and goes to Fastify. Only installed when Fastify would add nothing to the
 * answer: no rate limits, or limits this process counts (`limiter`, ip-limiter.ts: the request is
 * counted once, here or in Fastify's hook, and its x-ratelimit-* headers sent); see app.ts.
 * Returns whether it took the request.
 */
export function answerFast(
  deps: Deps,
  host: FilesHost,
  log: FastifyBaseLogger,
  req: IncomingMessage,
  res: ServerResponse,
  limiter: FilesIpLimiter | null = null,
): boolean {
  const method = req.method;
  if (host.closing || (method !== 'GET' && method !== 'HEAD') || !deps.storage.existsNow) return false;
  const url = req.url ?? '';
  if (url.charCodeAt(0) !== 47 /* '/' */ || url.includes('?') || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const meta = host.cache.get(url.slice(1));
  if (!meta) return false;
  if (!limiter) return answerCached(deps, host.cache, meta, log, req, res, undefined);
  // Counted only for a cached file (never /healthz); a 429 is Fastify's to answer. Whatever goes
  // on to Fastify after being counted takes its count with it.
  const limited = limiter.count(req, req.socket.remoteAddress ?? '');
  if (limited.allowed && answerCached(deps, host.cache, meta, log, req, res, limited)) return true;
  limiter.handOn(req, limited);
  return false;
}

/** answerFast's answer for a file in the cache; false when Fastify is to answer after all. */
function answerCached(deps: Deps, cache: FileMetaCache, meta: FileMeta, log: FastifyBaseLogger, req: IncomingMessage, res: ServerResponse, limited: LimitDecision | undefined): boolean {
  const method = req.method;
  const url = req.url;
  const started = performance.now();
  const conditional = notModified(req.headers, meta.etag, meta.timeCreated);
  const range = conditional ? null : rangeOf(req.headers, meta);
  if (range === 'unsatisfiable') return false;
  const status = conditional ? 304 : range ? 206 : 200;
  const logLine = () => {
    // The line Fastify would have logged (server/http/log-privacy.ts decides what of req is kept).
    if (!REQUEST_LOG_LEVELS.has(log.level)) return;
    log.info({ req: { method, url, host: req.headers.host, ip: req.socket.remoteAddress, socket: req.socket }, res: { statusCode: res.statusCode }, responseTime: performance.now() - started }, 'request completed');
  };
  const bodiless = status === 304 || method === 'HEAD' || meta.size === 0;
  if (bodiless || meta.body) {
    // Gone since it was cached (or unreadable): the route asks again and answers 404 (or 503).
    if (!deps.storage.existsNow?.(meta.storageKey)) return false;
    res.writeHead(status, withLimit(headersOf(meta, status, range), limited));
    if (bodiless) res.end();
    else res.end(range ? meta.body!.subarray(range.start, range.end + 1) : meta.body);
    logLine();
    return true;
  }
  // A small file first asked for without its bytes (a HEAD or a 304: link previewers and
  // revalidating browsers ask that way) was cached with no body. Fastify's route reads it and
  // keeps it, where this path would open, read and close it for every request until the entry
  // expired (2-3 x fewer 4 kB answers a second, bench/README.md).
  if (cache.wouldKeep(meta.size)) return false;
  const accel = accelTarget(deps.config.filesAccelRedirect, deps.storage, req, meta.storageKey, range);
  if (accel !== null) {
    if (!deps.storage.existsNow?.(meta.storageKey)) return false;
    res.writeHead(200, withLimit(accelHeaders(meta, accel), limited));
    res.end();
    logLine();
    return true;
  }
  // Opening is the existence check here. Only a file on this disk opens without a round trip
  // worth leaving to Fastify.
  const fd = orNull(() => deps.storage.openStoredNow?.(meta.storageKey));
  if (fd === null) return false;
  res.writeHead(status, withLimit(headersOf(meta, status, range), limited));
  res.once('finish', logLine);
  sendFile(fd, res, range, meta.size);
  return true;
}

/**
 * The limit's x-ratelimit-* headers go in writeHead's one object, joined with Object.assign:
 * the same 14 headers built with object spread, or with setHeader before writeHead (whose "slow
 * case" then passes every header through setHeader), made a third fewer 4 kB answers a second
 * (bench/README.md).
 */
function withLimit(headers: Record<string, string>, limited: LimitDecision | undefined): Record<string, string> {
  return limited ? Object.assign({}, headers, limited.headers) : headers;
}

/**
 * The fast path's synchronous look at the stored file: null when it is gone or cannot be read
 * now, and Fastify's route answers (404, or 503 with the storage error logged).
 */
function orNull<T>(look: () => T | null | undefined): T | null {
  try {
    return look() ?? null;
  } catch {
    return null;
  }
}

/**
 * The row's answer for `name`, cached. Requests that come while it is read share the read, so a
 * popular name whose entry passed TRUST_MS costs one query, not one per request in flight.
 */
function lookUp(deps: Deps, host: FilesHost, name: string): Promise<FileMeta | undefined> {
  const under = host.reading.get(name);
  if (under) return under;
  const read = readRow(deps, host.cache, name).finally(() => {
    if (host.reading.get(name) === read) host.reading.delete(name);
  });
  host.reading.set(name, read);
  return read;
}

async function readRow(deps: Deps, cache: FileMetaCache, name: string): Promise<FileMeta | undefined> {
  const forgotten = cache.forgotten;
  const file = await findFileByActualName(deps.db, name);
  if (!file) {
    cache.delete(name);
    return undefined;
  }
  const etag = `"${file.storage_key}"`;
  const active = isActiveType(file.mime_type);
  const headers = {
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
  };
  const meta: FileMeta = {
    storageKey: file.storage_key,
    owner: file.user_id,
    size: file.size,
    timeCreated: file.time_created,
    etag,
    headers,
    headers200: { ...headers, 'content-length': String(file.size) },
  };
  // A file that went in this process while its row was read may be this one: the row answers
  // the requests that asked before, but is not kept for those after.
  if (cache.forgotten === forgotten) cache.set(name, meta);
  return meta;
}

async function serveFile(deps: Deps, host: FilesHost, request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) {
  const { cache } = host;
  const name = request.params.name;
  // Not one of our names: answered without a database or disk lookup.
  if (!ACTUAL_NAME_PATTERN.test(name)) return notFound(reply);
  const cached = cache.get(name);
  const meta = cached ?? (await lookUp(deps, host, name));
  if (!meta) return notFound(reply);
  const answer = await answerFor(deps, cache, name, meta, request);
  if (answer === 'gone') {
    // Deleted since it was cached (here or by another process): ask the database once more.
    cache.delete(name);
    const fresh = cached ? await lookUp(deps, host, name) : undefined;
    const retry = fresh ? await answerFor(deps, cache, name, fresh, request) : 'gone';
    if (retry === 'gone') return notFound(reply);
    return send(reply, fresh!, retry);
  }
  return send(reply, meta, answer);
}

type Answer =
  | { status: 200; accel: HandOver }
  | { status: 304 }
  | { status: 416 }
  | { status: 200 | 206; range: { start: number; end: number } | null; body: Readable | Buffer | { fd: number } | null };

/** What to answer, after making sure the stored object is still there (it is gone once deleted). */
async function answerFor(deps: Deps, cache: FileMetaCache, name: string, meta: FileMeta, request: FastifyRequest): Promise<Answer | 'gone'> {
  const conditional = notModified(request.headers, meta.etag, meta.timeCreated);
  const range = conditional ? null : rangeOf(request.headers, meta);
  const kept = meta.body;
  if (conditional || range === 'unsatisfiable' || request.method === 'HEAD' || meta.size === 0 || kept) {
    if (!(await stillStored(deps.storage, meta.storageKey))) return 'gone';
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
  const prefix = deps.config.filesAccelRedirect;
  const accel = accelTarget(prefix, deps.storage, request, meta.storageKey, range);
  if (accel !== null) return (await stillStored(deps.storage, meta.storageKey)) ? { status: 200, accel } : 'gone';
  const signing = signedAccelTarget(prefix, deps.storage, request, meta.storageKey, range);
  if (signing !== null) {
    // The store is asked too, meanwhile: a file deleted by now is Stash's 404, not an error nginx makes of the store's.
    const [there, signed] = await Promise.all([stillStored(deps.storage, meta.storageKey), signing]);
    return there ? { status: 200, accel: signed } : 'gone';
  }
  if (deps.storage.openStoredNow) {
    // Local disk: opening the file is the existence check, and costs nothing extra.
    const fd = deps.storage.openStoredNow(meta.storageKey);
    if (fd === null) return 'gone';
    return { status: range ? 206 : 200, range, body: { fd } };
  }
  // The store's answer is awaited before the status is chosen: a file deleted since it was cached
  // is a 404 here, where a lazy read failed after the status as a 503 until the entry expired.
  const body = await deps.storage.openRead(meta.storageKey, range ?? undefined);
  return body ? { status: range ? 206 : 200, range, body } : 'gone';
}

/** A 200, 206 or 304's headers (design §8): the fast path and Fastify's reply send the same. */
function headersOf(meta: FileMeta, status: 200 | 206 | 304, range: { start: number; end: number } | null): Record<string, string> {
  if (status === 304) return meta.headers;
  if (status === 200 || !range) return meta.headers200;
  return { ...meta.headers, 'content-range': `bytes ${range.start}-${range.end}/${meta.size}`, 'content-length': String(range.end - range.start + 1) };
}

/**
 * A download handed to the proxy in front (accel-redirect.ts): this file's headers and where
 * nginx finds its bytes (and which of them, for a store it fetches), but no `Accept-Ranges`,
 * which comes with the bytes nginx sends (passed on, this one would be said twice). The answer's
 * own length is said, 0: nginx keeps its connection to Stash after a hand-over only when it
 * knows the answer has no body, and a chunked one (Node's default) it closes, a connection
 * opened and closed per download.
 */
function accelHeaders(meta: FileMeta, handOver: HandOver): Record<string, string> {
  const { 'accept-ranges': _sentWithTheBytes, ...headers } = meta.headers;
  Object.assign(headers, { 'x-accel-redirect': handOver.uri, 'content-length': '0' });
  if (handOver.range !== null) headers['x-stash-range'] = handOver.range;
  return headers;
}

function send(reply: FastifyReply, meta: FileMeta, answer: Answer) {
  if (answer.status === 416) {
    return reply.status(416).headers(meta.headers).header('content-range', `bytes */${meta.size}`).type('application/json').send({ success: false, error: 'Requested range not satisfiable.' });
  }
  if ('accel' in answer) return reply.status(200).headers(accelHeaders(meta, answer.accel)).send();
  const range = answer.status === 304 ? null : answer.range;
  void reply.status(answer.status).headers(headersOf(meta, answer.status, range));
  if (answer.status === 304) return reply.send();
  if (!answer.body) return reply.send(meta.size === 0 && answer.status === 200 ? '' : undefined);
  if ('fd' in answer.body) {
    // Sent by send-file.ts, not as a stream through Fastify: with the headers Fastify holds
    // (the rate limiter's), and Fastify still logs the request once the body is out.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.writeHead(answer.status, headersOf(meta, answer.status, range));
    sendFile(answer.body.fd, reply.raw, range, meta.size);
    return reply;
  }
  return reply.send(answer.body);
}

/** The range asked for; an `If-Range` that is not this file's ETag asks for the whole file. */
function rangeOf(headers: IncomingHttpHeaders, meta: FileMeta): ReturnType<typeof parseRange> {
  const ifRange = headers['if-range'];
  return parseRange(ifRange === undefined || ifRange === meta.etag ? headers.range : undefined, meta.size);
}

function notModified(headers: IncomingHttpHeaders, etag: string, timeCreated: number): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) {
    // If-None-Match wins over If-Modified-Since when both are sent (RFC 9110 §13.2.2).
    return inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  }
  const ims = headers['if-modified-since'];
  if (ims) {
    const since = Date.parse(ims);
    return Number.isFinite(since) && Math.floor(since / 1000) >= timeCreated;
  }
  return false;
}

function notFound(reply: FastifyReply) {
  return reply.status(404).header('cache-control', 'no-store').send({ success: false, error: 'Not found.' });
}
