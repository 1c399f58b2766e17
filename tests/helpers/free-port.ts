import net from 'node:net';

/**
 * A loopback port nothing listens on right now, for a server started as a child process
 * (the process tests, the browser suite's harness, the benchmarks).
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
