import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { PieceRelease, canFreePieces, claimBodyPieces } from '../../../server/lib/body-pieces.ts';

let server: http.Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(null));
  server = null;
});

/** The body pieces a real socket delivers for `body`, claimed as the upload route claims them. */
async function piecesOffASocket(body: Buffer): Promise<Buffer[]> {
  const got = new Promise<Buffer[]>((resolve) => {
    server = http.createServer((req, res) => {
      claimBodyPieces(req);
      const pieces: Buffer[] = [];
      req.on('data', (p: Buffer) => pieces.push(p));
      req.on('end', () => {
        res.end();
        resolve(pieces);
      });
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  await fetch(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/`, { method: 'POST', body: new Uint8Array(body) });
  return got;
}

describe('freeing an upload body piece once stored (issue 9, a lean process)', () => {
  it('runs where the server runs: this runtime can free an ArrayBuffer at once', () => {
    // Node 20 only with the flag production starts the server with (scripts/server-build.mjs).
    expect(canFreePieces).toBe(true);
  });

  it('frees a piece once another piece is taken, and the last one when the write finishes', async () => {
    const pieces = await piecesOffASocket(Buffer.alloc(1024 * 1024, 7));
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    const [first, second, third] = pieces as [Buffer, Buffer, Buffer];
    const release = new PieceRelease();
    // Two slices of one piece (what the multipart parser cuts around a part's headers).
    release.taken([first.subarray(0, 100), first.subarray(100)]);
    expect(first.byteLength).toBeGreaterThan(0);
    release.taken([second]);
    expect(first.byteLength).toBe(0);
    expect(second.byteLength).toBeGreaterThan(0);
    release.taken([third]);
    release.finish();
    expect(second.byteLength).toBe(0);
    expect(third.byteLength).toBe(0);
  });

  it('never frees a buffer that did not come off a socket as a whole body piece', async () => {
    const payload = Buffer.alloc(512 * 1024, 3);
    let seen: Buffer[] = [];
    // Fastify's inject, as the API tests use it: a request made up in memory from the caller's buffer.
    const app = Fastify();
    app.addContentTypeParser('application/octet-stream', (_req, _body, done) => done(null));
    app.post('/', (request, reply) => {
      claimBodyPieces(request.raw);
      const pieces: Buffer[] = [];
      request.raw.on('data', (p: Buffer) => pieces.push(p));
      request.raw.on('end', () => {
        seen = pieces;
        void reply.send('ok');
      });
      return reply;
    });
    await app.inject({ method: 'POST', url: '/', payload, headers: { 'content-type': 'application/octet-stream' } });
    await app.close();
    const mine = Buffer.alloc(64 * 1024, 5);
    const pooled = Buffer.from('a pooled small buffer');
    const release = new PieceRelease();
    release.taken([...seen, mine, pooled]);
    release.finish();
    expect(seen.length).toBeGreaterThan(0);
    expect(payload.equals(Buffer.alloc(512 * 1024, 3))).toBe(true);
    expect(mine.byteLength).toBe(64 * 1024);
    expect(pooled.toString()).toBe('a pooled small buffer');
  });
});
