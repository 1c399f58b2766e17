import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';

/** A URL the server will not fetch, with a reason a person can read (design §9: a 400). */
export class UrlRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlRefusedError';
  }
}

export interface SafeFetchOptions {
  /** Design §7: only public addresses unless URL_UPLOAD_ALLOW_PRIVATE is set. */
  allowPrivate: boolean;
  /** Design §7: at most 5 redirects, each one checked again. */
  maxRedirects?: number;
  /** No response headers, or no bytes for this long, ends the fetch. */
  timeoutMs?: number;
  /**
   * The whole fetch — connecting, every redirect hop, the headers and the body — must end within
   * this long from the first byte sent (design §7, issue 8 item 5: a server trickling header
   * lines used to hold a fetch forever, as the clock started only once headers were complete).
   */
  deadlineMs?: number;
  /** A body slower than this on average over each `rateWindowMs` is cut (0 = no check). */
  minBytesPerSecond?: number;
  rateWindowMs?: number;
  /** Tests only: addresses allowed although private, and a resolver standing in for DNS. */
  allowAddresses?: string[];
  lookup?: LookupFunction;
}

export interface FetchedBody {
  stream: Readable;
  finalUrl: URL;
  /** Bytes the server announced, if it did. */
  length: number | null;
}

/**
 * Fetches a URL for a URL upload without letting it reach the server's own network: the
 * address check happens at connect time inside request-filtering-agent (after DNS, so a name
 * resolving to 10.x is caught too) and again for every redirect hop, which is followed here by
 * hand. The body is handed back as a stream; the caller bounds its size.
 */
export async function safeFetch(raw: string, options: SafeFetchOptions): Promise<FetchedBody> {
  const maxRedirects = options.maxRedirects ?? 5;
  let url = parseHttpUrl(raw);
  // One clock for the whole fetch: each hop's request and the body are destroyed when it runs out.
  const deadline = new FetchDeadline(options.deadlineMs ?? DEFAULT_DEADLINE_MS);
  try {
    for (let hop = 0; ; hop++) {
      const res = await requestOnce(url, options, deadline);
      const status = res.statusCode ?? 0;
      // A redirect's or refusal's body is never wanted: destroyed, not drained, as draining an
      // endless one held its socket on after the answer went out, past the deadline and outside
      // max_url_fetches (design §6, §7).
      if (status >= 300 && status < 400 && res.headers.location) {
        res.destroy();
        if (hop >= maxRedirects) throw new UrlRefusedError(`The URL redirects more than ${maxRedirects} times.`);
        url = parseHttpUrl(resolveLocation(res.headers.location, url));
        continue;
      }
      if (status < 200 || status >= 300) {
        res.destroy();
        throw new UrlRefusedError(`The URL answered with HTTP ${status}.`);
      }
      const announced = Number(res.headers['content-length']);
      deadline.hand(res);
      res.once('close', () => deadline.clear());
      if (options.minBytesPerSecond) watchRate(res, options.minBytesPerSecond, options.rateWindowMs ?? 30_000);
      return { stream: res, finalUrl: url, length: Number.isFinite(announced) && announced >= 0 ? announced : null };
    }
  } catch (err) {
    deadline.clear();
    throw err;
  }
}

/** Design §7: no URL upload lasts longer than this, headers and body together. */
export const DEFAULT_DEADLINE_MS = 15 * 60_000;

const TOO_SLOW = 'The URL took too long to download.';

/** The one timer of a fetch: it destroys whatever is in flight (a hop's request, then the body). */
class FetchDeadline {
  private current: { destroy(err: Error): void } | null = null;
  private readonly timer: NodeJS.Timeout;
  expired = false;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.current?.destroy(new UrlRefusedError(TOO_SLOW));
    }, ms);
    this.timer.unref();
  }

  /** Puts `target` under the deadline; destroyed at once if it already passed. */
  hand(target: { destroy(err: Error): void }): void {
    this.current = target;
    if (this.expired) target.destroy(new UrlRefusedError(TOO_SLOW));
  }

  /** The body is handed on: the timer ends with it. */
  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * A body that keeps the socket busy with a byte now and then passes any idle timeout; averaged
 * over each window it must reach `min` bytes a second or it is cut (issue 8 item 5: one byte
 * every 10 s was kept for 15 minutes).
 */
function watchRate(res: http.IncomingMessage, min: number, windowMs: number): void {
  // Counted on the socket: a `data` listener here would start the body flowing before its reader.
  const socket = res.socket;
  let last = socket.bytesRead;
  const timer = setInterval(() => {
    const now = socket.bytesRead;
    const got = now - last;
    last = now;
    // The reader's own backpressure is not the remote's slowness.
    if (res.readableLength >= res.readableHighWaterMark) return;
    if (got < (min * windowMs) / 1000) res.destroy(new UrlRefusedError('The URL sent its data too slowly.'));
  }, windowMs);
  timer.unref();
  res.once('close', () => clearInterval(timer));
}

/** A remote server's Location header is input too: one that is no URL is a refusal, not a 500. */
function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).toString();
  } catch {
    throw new UrlRefusedError('The URL redirects to an address that is not valid.');
  }
}

function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError('Please enter a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefusedError('Only http and https URLs can be uploaded.');
  if (url.username || url.password) throw new UrlRefusedError('URLs with credentials are not accepted.');
  return url;
}

async function requestOnce(url: URL, options: SafeFetchOptions, deadline: FetchDeadline): Promise<http.IncomingMessage> {
  // Loaded at the first URL upload rather than at start (issue 9, a lean process).
  const { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } = await import('request-filtering-agent');
  const filter = {
    allowPrivateIPAddress: options.allowPrivate,
    allowMetaIPAddress: options.allowPrivate,
    allowIPAddressList: options.allowAddresses ?? [],
    // IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291 §2.5.5.1) is "unicast" to ipaddr.js,
    // yet a host with its sit tunnel up holds ::127.0.0.1 itself and tunnels the rest to the IPv4
    // address inside (design §7: public addresses only). No public host answers on it.
    denyIPAddressList: options.allowPrivate ? [] : ['::/96'],
  };
  // A fresh agent per hop: no pooled socket from an earlier, allowed host is ever reused.
  const agent = url.protocol === 'https:' ? new RequestFilteringHttpsAgent({ ...filter, keepAlive: false }) : new RequestFilteringHttpAgent({ ...filter, keepAlive: false });
  const get = url.protocol === 'https:' ? https.get : http.get;
  const timeout = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const req = get(
      url,
      { agent, timeout, headers: { 'user-agent': 'Stash URL upload', accept: '*/*' }, ...(options.lookup ? { lookup: options.lookup } : {}) },
      (res) => {
        // The same idle bound keeps applying while the body streams.
        res.socket.setTimeout(timeout, () => res.destroy(new UrlRefusedError('The URL stopped sending data.')));
        resolve(res);
      },
    );
    deadline.hand(req);
    req.on('timeout', () => req.destroy(new UrlRefusedError('The URL took too long to answer.')));
    req.on('error', (err) => {
      if (err instanceof UrlRefusedError) reject(err);
      else if (/not allowed/.test(err.message)) reject(new UrlRefusedError('The URL points to a private or reserved address, which is not allowed.'));
      else reject(new UrlRefusedError(unreachableMessage((err as NodeJS.ErrnoException).code)));
    });
  });
}

/**
 * Why a URL could not be fetched, in words a person can act on: "(ENOTFOUND)" said nothing to
 * someone pasting a link on a phone.
 */
export function unreachableMessage(code: string | undefined): string {
  switch (code) {
    case 'ENOTFOUND':
      return "The URL's server name could not be found. Check the address for a typo.";
    case 'EAI_AGAIN':
      return "The URL's server name could not be looked up right now. Try again in a moment.";
    case 'ECONNREFUSED':
      return "The URL's server refused the connection.";
    case 'ECONNRESET':
    case 'EPIPE':
      return "The URL's server closed the connection before sending the file.";
    case 'ETIMEDOUT':
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return "The URL's server could not be reached.";
    default:
      return code && /CERT|SSL|TLS|SIGNATURE|ISSUER/.test(code)
        ? "The URL's server has an HTTPS certificate that cannot be trusted."
        : 'The URL could not be fetched.';
  }
}
