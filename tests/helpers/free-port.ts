import fs from 'node:fs';
import net from 'node:net';

/** Below the kernel's ephemeral ports and above the well-known services' (PostgreSQL, Redis…). */
const LOWEST = 10_000;
const TRIES = 50;
/** Ports this process handed out: two servers started by one file never get the same one. */
const handedOut = new Set<number>();
/**
 * The Fetch standard's "bad ports" in the range picked from: fetch (Node's and the browser's)
 * refuses to connect to them. A server a test started on 10080 never answered the harness's
 * health check (CI of 2026-12-07 00:02, postgres-outage.test.ts).
 */
const FETCH_BAD_PORTS = new Set([10080]);

/**
 * The first port the kernel hands to outgoing connections (Linux: ip_local_port_range; its
 * default where the file cannot be read).
 */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function listenOn(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => {
      const { port: bound } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(bound));
    });
  });
}

/**
 * A loopback port nothing listens on right now, for a server started as a child process
 * (the process tests, the browser suite's harness, the benchmarks). Taken below the ephemeral
 * range: a port the kernel picked (listen on 0) is one it also gives to outgoing connections,
 * and in CI one of the many clients running beside a test took it between this check and the
 * child's listen — or between a killed server and its restart on the same port — and the
 * server failed with EADDRINUSE. Random, so test files in other processes rarely meet.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let i = 0; high - LOWEST > 1000 && i < TRIES; i++) {
    const candidate = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    if (handedOut.has(candidate) || FETCH_BAD_PORTS.has(candidate)) continue;
    handedOut.add(candidate); // before the check: calls running at once never pick it twice
    if ((await listenOn(candidate)) !== null) return candidate;
  }
  const any = await listenOn(0);
  if (any === null) throw new Error('no free loopback port');
  return any;
}
