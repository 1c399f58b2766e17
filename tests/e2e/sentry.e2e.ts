import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.ts';

/**
 * Issue 4: optional Sentry when a DSN is set. The SDK is real; only the ingest cannot run here,
 * so a local stand-in takes envelopes at the address the DSN names, as sentry.io would.
 */
class IngestStandIn {
  readonly envelopes: string[] = [];
  private server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (req.method === 'POST' && /^\/api\/1\/envelope\//.test(req.url ?? '')) this.envelopes.push(Buffer.concat(parts).toString());
      res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'application/json' }).end('{}');
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://publickey@127.0.0.1:${(this.server.address() as AddressInfo).port}/1`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Everything received so far, for expect.poll. */
  text(): string {
    return this.envelopes.join('\n');
  }
}

let stack: Stack;
const ingest = new IngestStandIn();

beforeAll(async () => {
  stack = await startStack({ SENTRY_DSN: await ingest.listen() });
});
afterAll(async () => {
  await stack?.stop();
  await ingest.close();
});

describe('error reporting with SENTRY_DSN set', () => {
  it('reports an uncaught error in the page', async () => {
    const { page, close } = await stack.openPage();
    try {
      await page.goto(`${stack.siteUrl}/`);
      // The SDK is downloaded after the first render, so the page throws until one arrives.
      await expect
        .poll(
          async () => {
            await page.evaluate(() => setTimeout(() => { throw new Error('e2e uncaught failure'); }));
            return ingest.text();
          },
          { timeout: 20_000, interval: 1000 },
        )
        .toContain('e2e uncaught failure');
    } finally {
      await close();
    }
  });

  it('reports a failure the router caught and showed as "Unexpected Application Error!"', async () => {
    // No service worker: its precache would answer for the chunk this test makes unreachable.
    const context = await stack.browser.newContext({ serviceWorkers: 'block' });
    try {
      // The login screen's code cannot be fetched (a deploy replaced it, the network dropped).
      await context.route('**/assets/login-page-*.js', (route) => route.abort());
      const page = await context.newPage();
      await page.goto(`${stack.siteUrl}/login`);
      await page.getByRole('heading', { name: 'Unexpected Application Error!' }).waitFor();
      await expect.poll(() => ingest.text(), { timeout: 20_000, interval: 250 }).toMatch(/login-page-[^"]*\.js/);
    } finally {
      await context.close();
    }
  });
});
