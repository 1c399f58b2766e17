import fs from 'node:fs';
import type { ServerResponse } from 'node:http';

/**
 * Issue 9, serving like a static server. Node has no sendfile, so a download is read into memory
 * and written to the socket; what this module saves is the allocation. fs.ReadStream takes a new
 * buffer for every read, so a 1 GiB download allocated 1 GiB outside V8's heap, and past a point
 * V8 answers growing external memory with full collections of the whole heap: half the server
 * processes measured spent 3 s of CPU per GiB (2 s of it on V8's GC threads) instead of 0.8 s,
 * and served at 500 instead of 1,200 MiB/s. Here each download reads through a few buffers that
 * go back to a shared spare list once the socket has taken their bytes (the write's callback),
 * so a steady download allocates nothing.
 */

/** One read: few system calls and event-loop turns per GiB, and little held per download. */
export const PIECE_BYTES = 512 * 1024;
/** Buffers one download reads into: one being filled while the others are being written. */
const IN_FLIGHT = 3;
/** Buffers kept between downloads; the rest of a burst goes back to the system. */
const MAX_SPARE = 16;

const spare: Buffer[] = [];

function take(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafeSlow(PIECE_BYTES);
}

function giveBack(buf: Buffer): void {
  if (spare.length < MAX_SPARE) spare.push(buf);
}

/** Buffers held for the next downloads (for tests: a finished download returns its own). */
export function spareBuffers(): number {
  return spare.length;
}

/**
 * Writes `range` (inclusive, as HTTP ranges are), or all `size` bytes when null, of the open
 * file `fd` as the body of `res`, whose headers the caller has set, then ends it; `fd` is
 * closed once nothing reads it any more. A client that goes away stops the reading; a read that
 * fails or finds the file shorter than expected cuts the connection, since a status already
 * sent cannot be taken back.
 */
export function sendFile(fd: number, res: ServerResponse, range: { start: number; end: number } | null, size: number): void {
  const end = range ? range.end : size - 1;
  const free: Buffer[] = [];
  let next = range ? range.start : 0;
  let reading = false;
  let writing = 0;
  let stopped = false;
  let closed = false;

  const closeFd = () => {
    if (closed || reading) return;
    closed = true;
    fs.close(fd, () => undefined);
  };
  const stop = (err?: Error) => {
    if (stopped) return;
    stopped = true;
    for (const buf of free.splice(0)) giveBack(buf);
    closeFd();
    if (err) res.destroy(err);
  };
  // The client went away (or the response was destroyed): buffers still queued on the dead
  // socket never get their callback and are left to the GC.
  res.once('close', () => stop());
  if (res.destroyed) stop();

  const pump = () => {
    if (stopped || reading) return;
    if (next > end) {
      if (writing === 0) {
        stop();
        res.end();
      }
      return;
    }
    const buf = free.pop() ?? (writing < IN_FLIGHT ? take() : null);
    if (!buf) return;
    const want = Math.min(PIECE_BYTES, end - next + 1);
    reading = true;
    fs.read(fd, buf, 0, want, next, (err, n) => {
      reading = false;
      if (stopped) {
        giveBack(buf);
        closeFd();
        return;
      }
      if (err || n === 0) {
        giveBack(buf);
        stop(err ?? new Error('the stored file is shorter than its record'));
        return;
      }
      next += n;
      writing += 1;
      res.write(n === buf.length ? buf : buf.subarray(0, n), (writeErr) => {
        writing -= 1;
        // Written or failed, the socket is done with these bytes: the buffer may be filled again.
        if (stopped) giveBack(buf);
        else free.push(buf);
        if (writeErr) stop();
        else pump();
      });
      pump();
    });
  };
  pump();
}
