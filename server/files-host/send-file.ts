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

/** A download's pieces (one read, one write to the socket) once several run at once: 1.5 MiB held per download. */
export const PIECE_BYTES = 512 * 1024;
/**
 * The pieces of the first few downloads running at once. A probe serving 512 MiB from the page
 * cache to curl on loopback, piece sizes alternated (bench/README.md): 2 MiB served 1,330–1,570
 * MiB/s, 512 KiB 1,130–1,160, 1 MiB 1,000–1,330, 4 MiB and 8 MiB less again. Fewer, larger
 * writes let the socket take more per system call; past 2 MiB a piece outgrows the CPU's caches.
 */
export const LARGE_PIECE_BYTES = 2 * 1024 * 1024;
/**
 * Downloads at once that read in large pieces (24 MiB in all); the rest read in small ones, so
 * many slow clients at once hold no more than before. A quiet host's downloads are all large.
 */
export const LARGE_DOWNLOADS = 4;
/** Buffers one download reads into: one being filled while the others are being written. */
const IN_FLIGHT = 3;
/** Buffers kept between downloads, by size (8 MiB and 12 MiB at most); the rest of a burst goes back to the system. */
const spare = new Map<number, { kept: Buffer[]; max: number }>([
  [PIECE_BYTES, { kept: [], max: 16 }],
  [LARGE_PIECE_BYTES, { kept: [], max: 6 }],
]);
let largeDownloads = 0;

function take(size: number): Buffer {
  return spare.get(size)!.kept.pop() ?? Buffer.allocUnsafeSlow(size);
}

function giveBack(buf: Buffer): void {
  const pool = spare.get(buf.length)!;
  if (pool.kept.length < pool.max) pool.kept.push(buf);
}

/** Buffers held for the next downloads (for tests: a finished download returns its own). */
export function spareBuffers(): number {
  return [...spare.values()].reduce((n, pool) => n + pool.kept.length, 0);
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
  // A body of more than one large piece takes large ones while few downloads do (LARGE_DOWNLOADS).
  const large = end - next + 1 > LARGE_PIECE_BYTES && largeDownloads < LARGE_DOWNLOADS;
  const piece = large ? LARGE_PIECE_BYTES : PIECE_BYTES;
  if (large) largeDownloads += 1;

  const closeFd = () => {
    if (closed || reading) return;
    closed = true;
    fs.close(fd, () => undefined);
  };
  const stop = (err?: Error) => {
    if (stopped) return;
    stopped = true;
    if (large) largeDownloads -= 1;
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
    const buf = free.pop() ?? (writing < IN_FLIGHT ? take(piece) : null);
    if (!buf) return;
    const want = Math.min(piece, end - next + 1);
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
