import os from 'node:os';
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * Issue 9, hashing off the critical path: SHA-256 of every uploaded chunk (design §7) was 22 % of
 * the server's CPU profile while taking a 1 GiB upload, all of it on the event loop (no SHA
 * extensions on this machine's CPU: ~1.3 GB/s on one core). Here the bytes are copied into 256 KiB
 * batches (one memcpy, about a tenth of hashing them) and hashed on a worker thread, so the event
 * loop goes back to the socket, the disk and every other request while another core hashes.
 */

/** Bytes gathered before one message to the worker: few messages, one copy, little held per upload. */
const BATCH_BYTES = 256 * 1024;
/** Bytes of one hash handed over and not yet hashed before `update` makes its caller wait. */
const MAX_QUEUED_BYTES = 4 * BATCH_BYTES;
/**
 * A hash of no more than this, all of it known by its digest, is made on the event loop: the
 * messages to the worker and back (and its thread woken) cost more than hashing a few KiB, which
 * takes microseconds (a screenshot sent by ShareX, issue 9's small uploads).
 */
const IN_PLACE_BYTES = 64 * 1024;

/** More workers than cores left over would only take turns. */
const WORKERS = Math.max(1, Math.min(4, os.availableParallelism() - 1));

// Plain CommonJS run with `eval`, so the same code runs from the sources (tsx, vitest) and from the
// compiled bundle without a file of its own to locate.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const running = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'update') {
    let hash = running.get(m.id);
    if (!hash) running.set(m.id, (hash = createHash('sha256')));
    hash.update(new Uint8Array(m.bytes, 0, m.length));
    // The memory goes back to be filled again: left here it would wait for this thread's GC,
    // which a thread allocating nothing else hardly runs.
    parentPort.postMessage({ id: m.id, hashed: m.length, bytes: m.bytes }, [m.bytes]);
  } else if (m.op === 'digest') {
    const hash = running.get(m.id) ?? createHash('sha256');
    running.delete(m.id);
    parentPort.postMessage({ id: m.id, hex: hash.digest('hex') });
  } else if (m.op === 'drop') {
    running.delete(m.id);
  }
});
`;

type Reply = { id: number; hashed: number; bytes: ArrayBuffer } | { id: number; hex: string };

interface Listener {
  hashed(bytes: number): void;
  digested(hex: string): void;
  failed(err: Error): void;
}

class HashWorker {
  private readonly worker: Worker;
  private readonly listeners = new Map<number, Listener>();
  dead: Error | null = null;

  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    // Referenced only while a hash runs: an idle worker must not keep a finished process alive.
    this.worker.unref();
    this.worker.on('message', (m: Reply) => {
      if ('bytes' in m) giveBack(m.bytes);
      const listener = this.listeners.get(m.id);
      if (!listener) return;
      if ('hex' in m) listener.digested(m.hex);
      else listener.hashed(m.hashed);
    });
    const fail = (err: Error) => {
      this.dead ??= err;
      const listening = [...this.listeners.values()];
      this.listeners.clear();
      for (const listener of listening) listener.failed(err);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the hashing thread exited (${code})`)));
  }

  listen(id: number, listener: Listener): void {
    this.listeners.set(id, listener);
    if (this.listeners.size === 1) this.worker.ref();
  }

  forget(id: number): void {
    if (this.listeners.delete(id) && this.listeners.size === 0) this.worker.unref();
  }

  post(message: { op: 'update'; id: number; bytes: ArrayBuffer; length: number } | { op: 'digest' | 'drop'; id: number }): void {
    if (message.op === 'update') this.worker.postMessage(message, [message.bytes]);
    else this.worker.postMessage(message);
  }
}

/** Batches back from the workers, filled again before any new memory is taken. */
const spare: ArrayBuffer[] = [];
/** Kept for the next batches; a burst beyond this many returns its memory to the system. */
const MAX_SPARE = 16;

function giveBack(bytes: ArrayBuffer): void {
  if (spare.length < MAX_SPARE && bytes.byteLength === BATCH_BYTES) spare.push(bytes);
}

function aBatch(): Buffer {
  const reused = spare.pop();
  return reused ? Buffer.from(reused) : Buffer.allocUnsafeSlow(BATCH_BYTES);
}

const pool: HashWorker[] = [];
let nextWorker = 0;
let nextId = 0;

function aWorker(): HashWorker {
  const slot = nextWorker++ % WORKERS;
  const current = pool[slot];
  // One that died (it never should: it only hashes) is replaced; the hashes it held fail.
  if (!current || current.dead) pool[slot] = new HashWorker();
  return pool[slot]!;
}

/** A running SHA-256 whose hashing happens on a worker thread. */
export class OffThreadSha256 {
  private readonly id = nextId++;
  private readonly worker = aWorker();
  /** Bytes gathered for the next message; made when the first byte comes, since each one moves to the worker. */
  private batch: Buffer | null = null;
  private filled = 0;
  /** Whether any bytes went to the worker (then the digest is the worker's too). */
  private posted = false;
  private queued = 0;
  private failure: Error | null = null;
  private readonly waiting: (() => void)[] = [];
  private result: { resolve: (hex: string) => void; reject: (err: Error) => void } | null = null;
  private finished = false;

  constructor() {
    this.worker.listen(this.id, {
      hashed: (bytes) => {
        this.queued -= bytes;
        if (this.queued <= MAX_QUEUED_BYTES) this.wake();
      },
      digested: (hex) => this.result?.resolve(hex),
      failed: (err) => {
        this.failure = err;
        this.wake();
        this.result?.reject(err);
      },
    });
  }

  /**
   * Adds `piece` (copied: the caller may reuse it at once). Returns a promise only when the
   * worker is behind by more than MAX_QUEUED_BYTES; awaiting it keeps memory bounded.
   */
  update(piece: Uint8Array): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    let at = 0;
    while (at < piece.length) {
      const n = Math.min(piece.length - at, BATCH_BYTES - this.filled);
      this.batch ??= aBatch();
      this.batch.set(piece.subarray(at, at + n), this.filled);
      this.filled += n;
      at += n;
      if (this.filled === BATCH_BYTES) this.flush();
    }
    if (this.queued <= MAX_QUEUED_BYTES) return undefined;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Adds every piece of `source`, waiting whenever the worker is behind. */
  async feed(source: AsyncIterable<Uint8Array>): Promise<void> {
    for await (const piece of source) await this.update(piece);
  }

  /** The hex digest of everything added; the hash cannot be used after. */
  digest(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.posted && this.filled <= IN_PLACE_BYTES) return Promise.resolve(this.digestInPlace());
    this.flush();
    this.finished = true;
    return new Promise<string>((resolve, reject) => {
      this.result = { resolve, reject };
      this.worker.post({ op: 'digest', id: this.id });
    }).finally(() => this.worker.forget(this.id));
  }

  /** Lets go of a hash that will not be digested (a failed or refused write). */
  dispose(): void {
    if (this.finished) return;
    this.finished = true;
    this.worker.forget(this.id);
    if (!this.worker.dead) this.worker.post({ op: 'drop', id: this.id });
  }

  private digestInPlace(): string {
    const hex = createHash('sha256')
      .update(this.batch ? this.batch.subarray(0, this.filled) : new Uint8Array(0))
      .digest('hex');
    if (this.batch) giveBack(this.batch.buffer as ArrayBuffer);
    this.batch = null;
    this.finished = true;
    this.worker.forget(this.id);
    return hex;
  }

  private flush(): void {
    if (!this.batch || this.filled === 0) return;
    this.posted = true;
    const length = this.filled;
    // The batch's memory moves to the worker (transferred, not copied).
    this.worker.post({ op: 'update', id: this.id, bytes: this.batch.buffer as ArrayBuffer, length });
    this.queued += length;
    this.batch = null;
    this.filled = 0;
  }

  private wake(): void {
    for (const resume of this.waiting.splice(0)) resume();
  }
}

/** The SHA-256 hex of a whole stream, hashed off the event loop; nothing is left running if it fails. */
export async function sha256OfStream(source: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = new OffThreadSha256();
  try {
    await hash.feed(source);
    return await hash.digest();
  } finally {
    hash.dispose();
  }
}
