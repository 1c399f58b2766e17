import fs from 'node:fs';

/** Linux's clock ticks per second in /proc/net/tcp's timer column (USER_HZ). */
const TICKS_PER_SECOND = 100;

const ESTABLISHED = '01';

/**
 * The kernel's timer on the open TCP connection from local port `port` to remote port
 * `remotePort`, from /proc/net/tcp(6): `tr` 2 is the keepalive timer, 0 none (an idle connection
 * without keepalive sends nothing until it is used). `when` is how long until it fires. Only
 * established connections: a closed one in TIME_WAIT (tr 3) may hold the same local port.
 */
export function tcpTimerOf(port: number, remotePort: number): { kind: number; seconds: number } {
  const hex = (n: number) => `:${n.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (!fields[1]?.endsWith(hex(port)) || !fields[2]?.endsWith(hex(remotePort)) || fields[3] !== ESTABLISHED) continue;
      const [kind, when] = fields[5]!.split(':');
      return { kind: Number.parseInt(kind!, 16), seconds: Number.parseInt(when!, 16) / TICKS_PER_SECOND };
    }
  }
  throw new Error(`no open TCP connection from local port ${port} to port ${remotePort}`);
}
