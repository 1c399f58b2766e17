import type { Redis } from 'ioredis';

/**
 * The Redis connection behind the shared rate-limit counters (design §6 at scale).
 *
 * Options follow @fastify/rate-limit's advice for ioredis: ioredis's defaults (a 10 s connect
 * timeout, 20 retries per command, an unbounded offline queue) would hold every request for
 * seconds while Redis is away. Here a command fails at once when the connection is down and
 * within `commandTimeout` when Redis hangs; the rate limiter then lets the request through
 * (`skipOnError` in app.ts). ioredis keeps reconnecting in the background, so the limits come
 * back by themselves. A Redis that stops answering is treated as one that went away.
 */
export async function connectRedis(url: string, log: (message: string) => void): Promise<Redis> {
  // Issue 9, a lean process: ioredis loads only where a Redis URL is configured.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 500,
    commandTimeout: 1000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // A Redis that hangs, or a network path that dropped the flow without a word (a NAT or
    // firewall forgetting an idle connection), leaves the socket open: `commandTimeout` alone
    // then refuses each command after its second but sends the next one into the same silence,
    // so every request waited a second, for as long as the kernel kept the connection (~15 min).
    // `socketTimeout` ends the connection when a command gets no answer — before that command
    // is refused, so the next cannot be written into the silence too — and ioredis connects again
    // in the background; until it is ready, commands fail at once (fail open).
    socketTimeout: 800,
    // A refused counter was reported to the rate limiter as failed (it let the request through);
    // sent again on the next connection it would count that request twice.
    autoResendUnfulfilledCommands: false,
    // Probes after 30 s of quiet keep an idle connection's flow known to NATs and firewalls.
    keepAlive: 30_000,
    // Retry quickly at first, then every 5 s: an outage costs no request time either way.
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });

  // One line per outage, not one per failed reconnect or request.
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log(`Redis unreachable (${err.message}): rate limits are not enforced until it is back`);
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log('Redis reachable again: rate limits are enforced');
  });

  try {
    await redis.connect();
  } catch {
    // Already logged by the error handler; the process starts anyway (fail open).
  }
  return redis;
}

/** Closes politely when connected, else drops the reconnect loop so the process can exit. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // Fall through: the connection went away while quitting.
    }
  }
  redis.disconnect();
}
