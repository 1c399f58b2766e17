import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, connectRedis } from '../../../server/redis.ts';
import { startTcpProxy } from '../../helpers/tcp-proxy.ts';
import { tcpTimerOf } from '../../helpers/tcp-timer.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;

/** Names of the RESP commands in what a client sent (`*N` then N `$len` bulk strings). */
function commandNames(sent: Buffer[]): string[] {
  const names: string[] = [];
  const text = Buffer.concat(sent).toString('latin1');
  const re = /\*\d+\r\n\$\d+\r\n([^\r]*)\r\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) names.push(m[1]!.toLowerCase());
  return names;
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!REDIS_URL)('Redis that stops answering (server/redis.ts)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('one command waits out the silence, not every one; the count it was refused is not sent again; the limits come back', async () => {
    const target = new URL(REDIS_URL!);
    const path = await startTcpProxy(Number(target.port || 6379));
    cleanups.push(path.close);
    target.host = new URL(path.url).host;
    const lines: string[] = [];
    const redis = await connectRedis(target.toString(), (line) => lines.push(line));
    cleanups.push(() => closeRedis(redis));
    const key = `stash-test-hang-${crypto.randomBytes(6).toString('hex')}`;
    const direct = new Redis(REDIS_URL!);
    cleanups.push(async () => {
      await direct.del(key);
      await direct.quit();
    });

    expect(await redis.incr(key)).toBe(1);
    path.silence(true);
    // Five requests' counters while the path is silent: each is refused (the rate limiter then
    // lets its request through), and only the first may be sent into the silence and wait for
    // its timeout; without the socket timeout every one of them waited its second.
    for (let i = 0; i < 5; i++) await expect(redis.incr(key)).rejects.toThrow();
    const counted = commandNames(path.unanswered).filter((name) => name === 'incr');
    expect(counted.length).toBeLessThanOrEqual(1);
    expect(lines).toEqual([expect.stringMatching(/^Redis unreachable \(.*\): rate limits are not enforced until it is back$/)]);

    path.silence(false);
    await until(() => redis.status === 'ready', 'the client to connect again');
    expect(lines[1]).toBe('Redis reachable again: rate limits are enforced');
    expect(await redis.incr(key)).toBe(2);
    // The refused count was not sent again on the new connection (the caller was told it failed).
    expect(await direct.get(key)).toBe('2');
  });

  it.skipIf(process.platform !== 'linux')('an idle connection has its keepalive timer running, due within 30 s', async () => {
    const redis = await connectRedis(REDIS_URL!, () => {});
    cleanups.push(() => closeRedis(redis));
    // `addr` is this connection's own end, as Redis sees it.
    const info = String(await redis.call('client', 'info'));
    const port = Number(/(?:^| )addr=[^ ]*:(\d+)/.exec(info)?.[1]);
    const timer = tcpTimerOf(port, Number(new URL(REDIS_URL!).port || 6379));
    // Without keepalive (ioredis's default leaves the kernel's 2 hours) no timer runs while idle,
    // and a NAT or firewall that forgot the flow is found only by the next counter, which waits.
    expect(timer.kind).toBe(2);
    expect(timer.seconds).toBeGreaterThan(0);
    expect(timer.seconds).toBeLessThanOrEqual(30);
  });
});
