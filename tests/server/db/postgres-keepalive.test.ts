import fs from 'node:fs';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/db/index.ts';

/** Linux's clock ticks per second in /proc/net/tcp's timer column (USER_HZ). */
const TICKS_PER_SECOND = 100;

/**
 * The kernel's timer on the TCP connection whose local port is `port`, from /proc/net/tcp(6):
 * `tr` 2 is the keepalive timer, 0 none (an idle connection without keepalive sends nothing
 * until it is used). `when` is how long until it fires.
 */
function timerOf(port: number): { kind: number; seconds: number } {
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

describe.skipIf(!process.env.TEST_DATABASE_URL || process.platform !== 'linux')('PostgreSQL connections keep a quiet network path open (server/db/index.ts)', () => {
  it('an idle pooled connection has its keepalive timer running, due within 30 s', async () => {
    const handle = openDatabase(process.env.TEST_DATABASE_URL!);
    try {
      // The connection's own end, as PostgreSQL sees it: the one this query ran on.
      const { rows } = await sql<{ port: number }>`select inet_client_port() as port`.execute(handle.db);
      const timer = timerOf(rows[0]!.port);
      // Without keepalive the kernel runs no timer on an idle connection, and a NAT or firewall
      // that forgot the flow is found only by the next query, minutes of retransmissions later.
      expect(timer.kind).toBe(2);
      expect(timer.seconds).toBeGreaterThan(0);
      expect(timer.seconds).toBeLessThanOrEqual(30);
    } finally {
      await handle.close();
    }
  });
});
