import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Storage } from '../storage/storage.ts';

/** How often a proxy sending its hand-overs back is logged, at most. */
const MISSING_LOCATION_LOG_MS = 60_000;

/**
 * Issue 9, downloads at nginx's speed: a Node process copies every byte it serves through its
 * own memory, where nginx hands the file to the socket with `sendfile` (bench/README.md,
 * "Download 1 GiB ≥ 0.9 × nginx": no Node server gets that back). So where nginx stands in
 * front (README "Deployment at scale"), the files host answers a download with its headers and
 * `X-Accel-Redirect`, and nginx fetches the bytes from an `internal` location — after Stash has
 * decided everything else: the name, the account, a deletion, the rate limit, 304 and 416.
 *
 * Only when the request says the proxy in front serves such answers (`X-Sendfile-Type:
 * X-Accel-Redirect`, which nginx sets with `proxy_set_header`: Rack::Sendfile's convention), so
 * a client reaching the files host directly still gets the bytes, and only for what would be
 * read from the store: small files (kept in memory), `HEAD` and empty files are answered here as
 * before. A request with `If-Range` is served here too: nginx, or the store, would compare a
 * date in it with their own file's, where Stash sends the whole file for anything but its ETag;
 * and so is one whose `Range` Stash does not read as one range (`range` is what it read, null
 * for none).
 */
function mayHandOver(
  prefix: string | null,
  request: { method?: string | undefined; headers: IncomingHttpHeaders },
  range: { start: number; end: number } | null,
): prefix is string {
  const { method, headers } = request;
  if (prefix === null || method !== 'GET' || headers['if-range'] !== undefined) return false;
  // A Range header Stash does not read as one range (malformed, reversed, several, another unit)
  // gets the whole file from Stash; nginx reads such headers its own way (416 for some).
  if (headers.range !== undefined && range === null) return false;
  return askedByProxy(headers);
}

/** Where a download handed over is: nginx's URI for it, and for a store fetched over HTTP the one range to ask it for. */
export interface HandOver {
  uri: string;
  range: string | null;
}

/**
 * A store of files on this machine (local disk): `<FILES_ACCEL_REDIRECT><path under files/>`,
 * which nginx reads with `alias` and cuts the range from itself. Synchronous, for the fast path.
 */
export function accelTarget(
  prefix: string | null,
  storage: Storage,
  request: { method?: string | undefined; headers: IncomingHttpHeaders },
  key: string,
  range: { start: number; end: number } | null,
): HandOver | null {
  if (!storage.storedPathWithin || !mayHandOver(prefix, request, range)) return null;
  return { uri: prefix + storage.storedPathWithin(key), range: null };
}

/**
 * A store reached over HTTP (S3): `<FILES_ACCEL_REDIRECT><path and query of a signed read>`,
 * which nginx's internal location proxies to the store's origin, asking for `range` as Stash
 * read it (`bytes=<first>-<last>`, sent to nginx as `X-Stash-Range`): the store never sees the
 * client's own headers, so it cannot read a range, a date or an ETag differently from Stash.
 * Null at once (no promise) where no hand-over applies, as accelTarget.
 */
export function signedAccelTarget(
  prefix: string | null,
  storage: Storage,
  request: { method?: string | undefined; headers: IncomingHttpHeaders },
  key: string,
  range: { start: number; end: number } | null,
): Promise<HandOver> | null {
  if (!storage.signedRead || !mayHandOver(prefix, request, range)) return null;
  return storage.signedRead(key).then((signed) => ({ uri: prefix + signed.pathname.slice(1) + signed.search, range: range ? `bytes=${range.start}-${range.end}` : null }));
}

function askedByProxy(headers: IncomingHttpHeaders): boolean {
  const type = headers['x-sendfile-type'];
  return typeof type === 'string' && type.toLowerCase() === 'x-accel-redirect';
}

/**
 * nginx without README's `internal` location for the prefix matches a hand-over against its
 * `location /` and passes it back here: every download of more than 64 KiB would fail with a 404
 * nobody could explain. Such a request (the prefix, from the proxy that asked for hand-overs)
 * is answered 502 with what is missing, and logged at most once a minute; any other request
 * under the prefix is a 404 like every unknown path.
 */
export function registerMissingLocationGuard(app: FastifyInstance, prefix: string): void {
  let lastLogged = -Infinity;
  app.get(`${prefix}*`, async (request, reply) => {
    if (!askedByProxy(request.headers)) return reply.callNotFound();
    const problem = `The proxy in front passed a download back instead of sending it: it has no internal location for FILES_ACCEL_REDIRECT (${prefix}). See README, "Deployment at scale".`;
    if (performance.now() - lastLogged >= MISSING_LOCATION_LOG_MS) {
      lastLogged = performance.now();
      request.log.error(problem);
    }
    return reply.status(502).header('cache-control', 'no-store').send({ success: false, error: problem });
  });
}
