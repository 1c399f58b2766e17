import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeRedis, connectRedis } from '../../../server/redis.ts';

describe('Redis outage (fail open)', () => {
  it('starts without Redis and tells the operator once that limits are off, not once per retry', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));

    const lines: string[] = [];
    const redis = await connectRedis(`redis://127.0.0.1:${port}`, (line) => lines.push(line));
    // Let ioredis retry a few times (its retry delays start at 200 ms).
    await new Promise((resolve) => setTimeout(resolve, 900));
    await closeRedis(redis);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Redis unreachable .*rate limits are not enforced/);
  });
});
