import { PassThrough, Readable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { piecesOf } from '../../../server/lib/stream-pieces.ts';

/**
 * Issue 9: an upload's bytes are handed from the multipart parser to the hash and the disk as the
 * parser emitted them. Readable's own iterator joined whatever was queued into a new Buffer (a
 * copy of most bytes of every chunk); these tests pin the pieces, the order, the pressure put back
 * on the sender and the endings (error, early stop) the upload path relies on.
 */
describe('piecesOf', () => {
  it('hands on the very buffers the source emitted, in order, even when several were queued', async () => {
    const source = new PassThrough();
    const sent = Array.from({ length: 6 }, (_, i) => Buffer.alloc(1000 + i, i));
    for (const b of sent) source.write(b);
    source.end();
    const got: Buffer[] = [];
    for await (const piece of piecesOf(source)) got.push(piece);
    expect(got).toHaveLength(sent.length);
    // The same memory, not a joined copy (Readable's iterator would yield one 6,015-byte Buffer).
    got.forEach((piece, i) => expect(piece.buffer).toBe(sent[i]!.buffer));
  });

  it('pauses the source while the consumer is behind, and resumes it once it catches up', async () => {
    let produced = 0;
    const source = new Readable({
      highWaterMark: 1024,
      read() {
        produced += 1024;
        this.push(produced > 64 * 1024 ? null : Buffer.alloc(1024));
      },
    });
    const iterator = piecesOf(source, 8 * 1024);
    await iterator.next();
    for (let i = 0; i < 20; i++) await tick();
    // Nobody asked for more: the source stopped at the bound (plus its own small buffer).
    expect(source.isPaused()).toBe(true);
    expect(produced).toBeLessThanOrEqual(8 * 1024 + 3 * 1024);
    let bytes = 1024;
    for await (const piece of iterator) bytes += piece.length;
    expect(bytes).toBe(64 * 1024);
  });

  it('throws the source error at once', async () => {
    const source = new PassThrough();
    source.write(Buffer.from('first'));
    const iterator = piecesOf(source);
    expect((await iterator.next()).value?.toString()).toBe('first');
    source.destroy(new Error('connection reset'));
    await expect(iterator.next()).rejects.toThrow('connection reset');
  });

  it('hands on the pieces that arrived before an error, then throws it: a cut upload keeps them', async () => {
    const source = new PassThrough();
    for (const text of ['one', 'two', 'three']) source.write(Buffer.from(text));
    const iterator = piecesOf(source);
    expect((await iterator.next()).value?.toString()).toBe('one');
    // 'two' and 'three' already sit in the queue when the connection drops.
    await tick();
    source.destroy(new Error('connection reset'));
    await tick();
    expect((await iterator.next()).value?.toString()).toBe('two');
    expect((await iterator.next()).value?.toString()).toBe('three');
    await expect(iterator.next()).rejects.toThrow('connection reset');
  });

  it('treats a source closed before its end as an error, not as the end of the bytes', async () => {
    const source = new PassThrough();
    source.write(Buffer.from('part'));
    const iterator = piecesOf(source);
    await iterator.next();
    source.destroy();
    await expect(iterator.next()).rejects.toThrow(/premature close/i);
  });

  it('destroys the source when the consumer stops early, so the sender is not left waiting', async () => {
    const source = new PassThrough();
    source.write(Buffer.alloc(10));
    source.write(Buffer.alloc(10));
    for await (const piece of piecesOf(source)) {
      expect(piece.length).toBe(10);
      break;
    }
    expect(source.destroyed).toBe(true);
  });
});
