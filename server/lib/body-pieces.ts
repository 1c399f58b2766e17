import net from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * Issue 9, a lean process: the memory of an upload's body pieces is given back as soon as the
 * store has taken their bytes, instead of when V8 next collects. Node's HTTP parser copies every
 * piece of a request body into a buffer of its own (~64 KiB); once the multipart parser has cut
 * the file's bytes out of it and the store has written them, nothing reads it again, but V8 only
 * frees it at its next collection. Eight uploads at once left 20–60 MiB of such pieces waiting
 * (bench/README.md); `ArrayBuffer.prototype.transfer(0)` frees one at once.
 *
 * Only buffers this module saw come off a real socket as a whole body piece are ever freed, so a
 * buffer anyone else could still read (Node's shared pool, the multipart parser's look-behind,
 * a test's own payload handed to `inject`) is never touched.
 */

/** `transfer` is ES2024 (Node 22; Node 20 with `--harmony-rab-gsab-transfer`, scripts/server-build.mjs). */
type Transferable = ArrayBuffer & { transfer?: (newLength?: number) => ArrayBuffer };

/** Whether this runtime can free an ArrayBuffer's memory at once; without it pieces wait for GC, as before. */
export const canFreePieces = typeof (ArrayBuffer.prototype as Transferable).transfer === 'function';

/** Buffers made by Node's HTTP parser for one body piece each, read by nothing but the upload. */
const bodyPieces = new WeakSet<ArrayBuffer>();

/**
 * Marks the body pieces `req` emits from now on as the upload's to free. Call it once the body
 * is already being read (a 'data' listener added earlier would start the flow before the
 * multipart parser listens).
 */
export function claimBodyPieces(req: IncomingMessage): void {
  // A request made up in memory (light-my-request) emits its caller's own buffers.
  if (!canFreePieces || !(req.socket instanceof net.Socket)) return;
  req.on('data', (piece: Buffer) => {
    // A piece that is only part of its buffer shares it with something else.
    if (piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength) bodyPieces.add(piece.buffer as ArrayBuffer);
  });
}

/**
 * Frees the claimed pieces of one write as the store reports them taken, in order. The multipart
 * parser cuts each body piece synchronously, so all the slices of one piece arrive one after the
 * other (a tail it keeps for a boundary that may straddle two pieces is copied into its own
 * look-behind buffer first): a piece's buffer is freed when the first slice of another arrives,
 * and the last one when the write has finished.
 */
export class PieceRelease {
  private current: ArrayBuffer | null = null;

  /** The store has written (or copied) these pieces and will not read them again. */
  taken(pieces: readonly Uint8Array[]): void {
    for (const piece of pieces) {
      const buffer = piece.buffer as ArrayBuffer;
      if (buffer === this.current) continue;
      this.free();
      this.current = buffer;
    }
  }

  /** The write has ended and the store took everything: the last piece goes too. */
  finish(): void {
    this.free();
  }

  private free(): void {
    const buffer = this.current as Transferable | null;
    this.current = null;
    // Taken out of the set as it is freed, so no buffer is freed twice.
    if (!buffer || !bodyPieces.delete(buffer)) return;
    try {
      buffer.transfer!(0);
    } catch {
      // A buffer V8 will not detach (never one Node's parser made, so far) is left to the GC:
      // freeing early is a saving, never a reason to fail an upload that is already stored.
    }
  }
}
