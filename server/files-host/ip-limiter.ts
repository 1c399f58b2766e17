import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { hashedIpKey, tooMany } from '../http/rate-limits.ts';

/** One client address's count in the current window. */
interface Window {
  count: number;
  resetAt: number;
}

export interface LimitDecision {
  allowed: boolean;
  /** The x-ratelimit-* headers @fastify/rate-limit sends, so both paths answer alike. */
  headers: { 'x-ratelimit-limit': string; 'x-ratelimit-remaining': string; 'x-ratelimit-reset': string };
  resetSeconds: number;
}

/** Addresses counted at once; past it the oldest window is forgotten (the plugin's local store keeps 5,000). */
const MAX_ADDRESSES = 50_000;

/**
 * Design §6: the files host is limited per client IP (FILES_RATE_LIMIT a minute), counted in this
 * process when no Redis shares the counters. Issue 9: a limit kept here can be asked synchronously
 * by the fast path (files-host.ts answerFast), so with limits on — the default — a cached file is
 * still answered before Fastify; with @fastify/rate-limit every request had to go through Fastify
 * (2.3 × fewer 4 kB requests a second, p99 5–8 × longer; bench/README.md). The same fixed window
 * as the plugin's local store: it starts with an address's first request and its count is the
 * answer's `x-ratelimit-remaining`. Keys are the salted hash of the address (design §11), never
 * the address.
 */
export class FilesIpLimiter {
  private readonly windows = new Map<string, Window>();
  /**
   * The hashed key of each open connection's address: a client keeps its connection for many
   * requests (a gallery's thumbnails, wrk's -c50), and the HMAC costs 2.6–3.0 µs each time.
   * Held with the socket, which holds the address anyway, and gone with it.
   */
  private readonly socketKeys = new WeakMap<Socket, { ip: string; key: string }>();
  /**
   * The decisions of requests the fast path counted and then handed to Fastify, so its hook does
   * not count them again. Only those: the fast path answers nearly every request itself, and an
   * entry for each would be a weak reference the garbage collector has to trace for nothing.
   * Beside the request rather than on it: a property added to a request changes its shape for
   * all of Node's HTTP code that handles it.
   */
  private readonly handedOn = new WeakMap<IncomingMessage, LimitDecision>();
  /** The limit as its header says it, made once. */
  private readonly limitHeader: string;

  constructor(
    private readonly salt: string,
    private readonly max: number,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.limitHeader = String(max);
  }

  /** The fast path's count of one request from `ip`; `handOn` it if Fastify is to answer after all. */
  count(req: IncomingMessage, ip: string): LimitDecision {
    return this.countKey(this.keyOf(req.socket, ip));
  }

  /** A request the fast path counted goes to Fastify: its hook takes this decision. */
  handOn(req: IncomingMessage, decision: LimitDecision): void {
    this.handedOn.set(req, decision);
  }

  /** Fastify's hook: the decision the fast path handed on with the request, or a new count. */
  take(req: IncomingMessage, ip: string): LimitDecision {
    return this.handedOn.get(req) ?? this.count(req, ip);
  }

  private keyOf(socket: Socket, ip: string): string {
    const known = this.socketKeys.get(socket);
    if (known?.ip === ip) return known.key;
    const key = hashedIpKey(this.salt, ip);
    this.socketKeys.set(socket, { ip, key });
    return key;
  }

  private countKey(key: string): LimitDecision {
    const now = this.now();
    this.forgetEnded(now);
    let window = this.windows.get(key);
    if (!window) {
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    const resetSeconds = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    return {
      allowed: window.count <= this.max,
      headers: {
        'x-ratelimit-limit': this.limitHeader,
        'x-ratelimit-remaining': String(Math.max(0, this.max - window.count)),
        'x-ratelimit-reset': String(resetSeconds),
      },
      resetSeconds,
    };
  }

  /**
   * Windows all last as long and are inserted as they open, so the map is in the order they end:
   * ended ones are dropped from its front as requests come (a key lives no longer than its window,
   * design §6), and past MAX_ADDRESSES the oldest go early, costing those addresses at most a
   * fresh budget. Usually one entry is looked at.
   */
  private forgetEnded(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.resetAt > now && this.windows.size < MAX_ADDRESSES) return;
      this.windows.delete(key);
    }
  }
}

/**
 * Fastify's side of the same count: every request but `/healthz` (load balancers poll it) is
 * counted, unless the fast path already counted it and handed it on, and past the limit answered
 * 429 with Retry-After, as @fastify/rate-limit answers on the API.
 */
export function limitFilesHost(app: FastifyInstance, limiter: FilesIpLimiter): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url === '/healthz') return;
    const decision = limiter.take(request.raw, request.ip);
    void reply.headers(decision.headers);
    if (!decision.allowed) throw tooMany(decision.resetSeconds);
  });
}
