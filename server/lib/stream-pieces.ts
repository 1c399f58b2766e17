import { finished, Readable } from 'node:stream';

/**
 * Iterates `source`'s buffers as it emits them. Readable's own async iterator calls `read()`,
 * which joins everything queued into one new Buffer: while a chunk streams in that is a copy of
 * most of its bytes and a fresh allocation of up to 256 KiB per read (4 % of the event loop's
 * samples, bench/README.md). Here each piece is handed on as it came, and the source is paused
 * once `maxQueued` bytes wait, so the sender is held back as before.
 *
 * Like Readable's iterator, the source is destroyed when the consumer stops early, and an error
 * or a premature close ends the iteration with that error — but only after the pieces that had
 * already arrived: a cut upload stores them, so the client does not send them again (design §7).
 */
export async function* piecesOf(source: Readable, maxQueued = 256 * 1024): AsyncGenerator<Buffer> {
  const queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const onData = (piece: Buffer) => {
    queue.push(piece);
    queued += piece.length;
    if (queued >= maxQueued) source.pause();
    notify();
  };
  source.on('data', onData);
  const stopWatching = finished(source, (err) => {
    if (err) failure = err;
    else ended = true;
    notify();
  });
  try {
    for (;;) {
      const piece = queue.shift();
      if (piece) {
        queued -= piece.length;
        if (queued < maxQueued && source.isPaused() && !ended) source.resume();
        yield piece;
      } else if (failure) {
        throw failure;
      } else if (ended) {
        return;
      } else {
        await new Promise<void>((resolve) => (wake = resolve));
      }
    }
  } finally {
    source.off('data', onData);
    stopWatching();
    if (!ended) source.destroy();
  }
}

/** What a store may be given to write: a stream, or an upload's pieces as an async iterable. */
export type ByteSource = Readable | AsyncIterable<Buffer>;

/**
 * A store's source as pieces: a Readable through piecesOf, an async iterable of Buffers (an
 * upload's metered generator, server/modules/files/stream-into-storage.ts) as it is — wrapping
 * it in a Readable only to take it apart again would cost a stream hop per piece.
 */
export function piecesFrom(source: ByteSource): AsyncIterable<Buffer> {
  return source instanceof Readable ? piecesOf(source) : source;
}
