import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/db/index.ts';
import { tcpTimerOf } from '../../helpers/tcp-timer.ts';

describe.skipIf(!process.env.TEST_DATABASE_URL || process.platform !== 'linux')('PostgreSQL connections keep a quiet network path open (server/db/index.ts)', () => {
  it('an idle pooled connection has its keepalive timer running, due within 30 s', async () => {
    const handle = openDatabase(process.env.TEST_DATABASE_URL!);
    try {
      // The connection's own end, as PostgreSQL sees it: the one this query ran on.
      const { rows } = await sql<{ port: number }>`select inet_client_port() as port`.execute(handle.db);
      const timer = tcpTimerOf(rows[0]!.port, Number(new URL(process.env.TEST_DATABASE_URL!).port || 5432));
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
