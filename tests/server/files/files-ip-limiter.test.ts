import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { FilesIpLimiter } from '../../../server/files-host/ip-limiter.ts';

/** A request object as the files host's server hands it over (never sent anywhere). */
const request = () => new http.IncomingMessage(new net.Socket());

/** Design §6: the files host's per-address limit, counted in the process (issue 9: asked by the fast path). */
describe('FilesIpLimiter', () => {
  it('refuses past the limit within a window, starts afresh when it ends, and counts each request once', () => {
    let now = 1_000_000;
    const limiter = new FilesIpLimiter('salt', 2, 60_000, () => now);
    const first = request();
    const counted = limiter.count(first, '198.51.100.7');
    expect(counted.headers['x-ratelimit-remaining']).toBe('1');
    // Handed from the fast path to Fastify's hook: the same decision, not a second count.
    limiter.handOn(first, counted);
    expect(limiter.take(first, '198.51.100.7')).toBe(counted);
    expect(limiter.take(request(), '198.51.100.7').allowed).toBe(true);
    now += 30_000;
    const over = limiter.take(request(), '198.51.100.7');
    expect(over.allowed).toBe(false);
    expect(over.resetSeconds).toBe(30);
    expect(over.headers['x-ratelimit-reset']).toBe('30');
    expect(limiter.take(request(), '198.51.100.8').allowed).toBe(true);
    now += 30_000;
    const fresh = limiter.take(request(), '198.51.100.7');
    expect(fresh.allowed).toBe(true);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('counts by address, not by connection: one connection reused, another from the same address, another address', () => {
    const limiter = new FilesIpLimiter('salt', 10);
    const kept = new net.Socket();
    const on = (socket: net.Socket) => new http.IncomingMessage(socket);
    expect(limiter.take(on(kept), '198.51.100.7').headers['x-ratelimit-remaining']).toBe('9');
    expect(limiter.take(on(kept), '198.51.100.7').headers['x-ratelimit-remaining']).toBe('8');
    expect(limiter.take(on(new net.Socket()), '198.51.100.7').headers['x-ratelimit-remaining']).toBe('7');
    // The address a request is counted under wins over what its connection was counted under.
    expect(limiter.take(on(kept), '198.51.100.9').headers['x-ratelimit-remaining']).toBe('9');
    expect(limiter.take(on(kept), '198.51.100.7').headers['x-ratelimit-remaining']).toBe('6');
  });

  it('keeps no address, only its salted hash, and no longer than its window', () => {
    let now = 0;
    const limiter = new FilesIpLimiter('salt', 5, 60_000, () => now);
    // Test-only look at what a dump of the process's counters would show.
    const keys = () => [...(limiter as unknown as { windows: Map<string, unknown> }).windows.keys()];
    limiter.take(request(), '203.0.113.99');
    now += 59_000;
    limiter.take(request(), '203.0.113.100');
    expect(keys()).toHaveLength(2);
    expect(keys().join(' ')).not.toContain('203.0.113');
    now += 1_000;
    limiter.take(request(), '203.0.113.100');
    expect(keys()).toHaveLength(1);
  });
});
