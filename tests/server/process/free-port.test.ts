import fs from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';

/**
 * The port a test starts a child server on must not be one the kernel can give an outgoing
 * connection in the meantime (CI: `listen EADDRINUSE` when a killed server came back on its port).
 */
describe('freePort', () => {
  it('hands out distinct ports below the ephemeral range that a server can listen on', async () => {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeLessThan(low);
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(ports[0], '127.0.0.1', resolve);
    });
    await new Promise((resolve) => srv.close(resolve));
  });
});
