import fs from 'node:fs';

/** Linux's clock ticks per second in /proc/net/tcp's timer column (USER_HZ). */
const TICKS_PER_SECOND = 100;

/**
 * The kernel's timer on the TCP connection whose local port is `port`, from /proc/net/tcp(6):
 * `tr` 2 is the keepalive timer, 0 none (an idle connection without keepalive sends nothing
 * until it is used). `when` is how long until it fires.
 */
export function tcpTimerOf(port: number): { kind: number; seconds: number } {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (!fields[1]?.endsWith(hexPort)) continue;
      const [kind, when] = fields[5]!.split(':');
      return { kind: Number.parseInt(kind!, 16), seconds: Number.parseInt(when!, 16) / TICKS_PER_SECOND };
    }
  }
  throw new Error(`no TCP connection from local port ${port}`);
}
