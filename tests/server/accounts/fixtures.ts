import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../../helpers/test-app.ts';

/** Every row of every table, so a test can show that a refused call changed nothing. */
export async function snapshot(t: TestApp): Promise<string> {
  const tables = ['roles', 'users', 'sessions', 'api_keys', 'invites', 'settings', 'mime_types', 'files', 'uploads', 'upload_chunks'] as const;
  // Read in parallel: on PostgreSQL each table is a round trip, and the fuzz suite takes
  // one snapshot per refused case.
  const rows = await Promise.all(tables.map((table) => t.deps.db.selectFrom(table).selectAll().execute()));
  const out: Record<string, unknown[]> = {};
  tables.forEach((table, i) => {
    out[table] = rows[i]!.map((r) => JSON.stringify(r)).sort();
  });
  return JSON.stringify(out);
}

/**
 * A stand-in for the captcha provider's siteverify endpoint, on real HTTP at 127.0.0.1: it
 * accepts the answer `good` for the expected secret and refuses everything else.
 */
export async function startCaptchaProvider(secret: string): Promise<{ url: string; requests: URLSearchParams[]; close(): Promise<void> }> {
  const requests: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      requests.push(form);
      const success = form.get('secret') === secret && form.get('response') === 'good';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
