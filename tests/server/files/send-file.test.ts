import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LARGE_DOWNLOADS, LARGE_PIECE_BYTES, PIECE_BYTES, sendFile, spareBuffers } from '../../../server/files-host/send-file.ts';

/**
 * Issue 9: downloads from local disk go through send-file.ts, which reads into a few buffers it
 * reuses instead of a new one per read. Whatever the range, the client gets exactly the file's
 * bytes; a client that leaves, or a file shorter than promised, leaves no descriptor open.
 */
describe('sending a stored file through reused buffers', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-send-file-'));
  const file = path.join(dir, 'stored.bin');
  // Larger than what the sockets between a client and the server hold, so a download whose
  // client stops reading is still under way (its descriptor open) when the next one starts.
  const data = crypto.randomBytes(12 * LARGE_PIECE_BYTES + 12_345);
  let server: http.Server;
  let url = '';
  /** What the next request's body is cut to: [start, end] inclusive, and how many bytes to promise. */
  let span = { start: 0, end: data.length - 1, length: data.length };
  /** The largest piece written to each request's body, by the request's path. */
  const largestWrite = new Map<string, number>();

  beforeAll(async () => {
    fs.writeFileSync(file, data);
    server = http.createServer((req, res) => {
      const write = res.write.bind(res);
      // Node types write's overloads apart; send-file.ts calls the (chunk, callback) one.
      res.write = ((chunk: Buffer, callback: (err?: Error | null) => void) => {
        largestWrite.set(req.url ?? '', Math.max(largestWrite.get(req.url ?? '') ?? 0, chunk.length));
        return write(chunk, callback);
      }) as typeof res.write;
      const fd = fs.openSync(file, 'r');
      res.writeHead(200, { 'content-length': String(span.length) });
      // The whole file goes as no range at all, as the files host sends a 200.
      sendFile(fd, res, span.start === 0 && span.end === data.length - 1 ? null : span, data.length);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** This process's descriptors open on the stored file (sockets and the rest left out). */
  const openDescriptors = () =>
    fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
      } catch {
        return false; // closed while listed
      }
    }).length;
  /**
   * Nothing else opens the file, so once a download is over none may be open on it. Descriptors
   * close a moment after the client has the last byte: polled, not slept for (and not counted
   * against a figure taken at the test's start, which a previous test's closing could still be in).
   */
  const allClosed = (what: string) => vi.waitFor(() => expect(openDescriptors(), what).toBe(0), { timeout: 5_000, interval: 20 });

  async function get(start: number, end: number, as = ''): Promise<Buffer> {
    span = { start, end, length: end - start + 1 };
    return Buffer.from(await (await fetch(url + as)).arrayBuffer());
  }

  it('sends exactly the bytes asked for, for ranges on, around and across its pieces', async () => {
    const spans: [number, number][] = [
      [0, data.length - 1],
      [0, 0],
      [data.length - 1, data.length - 1],
    ];
    // Small pieces (a body of at most one large piece) and large ones.
    for (const P of [PIECE_BYTES, LARGE_PIECE_BYTES]) {
      spans.push([0, P - 1], [0, P], [P - 1, P], [P, 2 * P - 1], [P + 1, 4 * P + 7], [data.length - P - 3, data.length - 1]);
    }
    for (const [start, end] of spans) {
      expect((await get(start, end)).equals(data.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
    await allClosed('every descriptor closed');
  });

  it('takes no new memory for a download once it has buffers to reuse', async () => {
    await get(0, data.length - 1);
    const allocations = vi.spyOn(Buffer, 'allocUnsafeSlow');
    for (let i = 0; i < 3; i++) expect((await get(0, data.length - 1)).equals(data)).toBe(true);
    // fs.ReadStream, which this replaced, took a new buffer for every read.
    expect(allocations.mock.calls.filter(([size]) => size >= PIECE_BYTES)).toEqual([]);
    expect(spareBuffers()).toBeGreaterThan(0);
  });

  it('reads in large pieces for the first downloads at once, in small ones beyond them, and in large again once one ends', async () => {
    span = { start: 0, end: data.length - 1, length: data.length };
    const held = await Promise.all(
      Array.from({ length: LARGE_DOWNLOADS }, async (_, i) => {
        const leaving = new AbortController();
        const res = await fetch(`${url}held-${i}`, { signal: leaving.signal });
        await res.body!.getReader().read();
        return leaving;
      }),
    );
    try {
      expect(openDescriptors(), 'the held downloads are still under way').toBe(LARGE_DOWNLOADS);
      expect((await get(0, data.length - 1, 'beyond')).equals(data)).toBe(true);
      expect(largestWrite.get('/beyond')).toBe(PIECE_BYTES);
      for (let i = 0; i < LARGE_DOWNLOADS; i++) expect(largestWrite.get(`/held-${i}`)).toBe(LARGE_PIECE_BYTES);
    } finally {
      for (const leaving of held) leaving.abort();
    }
    await allClosed('the held downloads closed their files');
    expect((await get(0, data.length - 1, 'after')).equals(data)).toBe(true);
    expect(largestWrite.get('/after')).toBe(LARGE_PIECE_BYTES);
  });

  it('stops reading and closes the file when the client leaves mid-body', async () => {
    span = { start: 0, end: data.length - 1, length: data.length };
    const leaving = new AbortController();
    const res = await fetch(url, { signal: leaving.signal });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    leaving.abort();
    await allClosed('the abandoned download closed its file');
    expect((await get(0, data.length - 1)).equals(data)).toBe(true);
  });

  it('cuts the connection when the file is shorter than the range promised, instead of hanging', async () => {
    // The headers promise 3 small pieces past the end of the file: the client must see the body fail.
    span = { start: data.length - 100, end: data.length + 3 * PIECE_BYTES, length: 3 * PIECE_BYTES + 101 };
    const res = await fetch(url);
    await expect(res.arrayBuffer()).rejects.toThrow();
    await allClosed('the failed download closed its file');
  });
});
