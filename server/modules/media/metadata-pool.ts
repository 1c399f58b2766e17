import type { ChildProcess } from 'node:child_process';
import { PREVIEWS_READER, type FromWorker, type KindResult, type MetadataTask, type PreviewResult, type SizeResult, type TaskMessage, type TaskResult, type ToWorker } from './metadata-protocol.ts';
import { processCpuMs } from '../../lib/process-cpu.ts';
import { lowerPriority, spawnReader } from './spawn-reader.ts';

/** Reads `[start, end)` of the upload being measured. */
export type ReadRange = (start: number, end: number) => Promise<Buffer>;

export interface MetadataLimits {
  /** Reader processes at most: parsing is CPU work, and these machines have two cores for everything. */
  workers: number;
  /**
   * CPU time a task may use in the worker, not counting the range reads it waits for (storage
   * speed is not the parser's fault). Well-formed files take a few milliseconds; the crafted
   * MP4 of issue 8 took 5 s on the main thread. CPU, not the wall clock, where /proc tells it:
   * on a machine busy with other work a reader may wait seconds for a core, and a PNG read
   * then had been stored as application/octet-stream with no size.
   */
  busyMs: number;
  /** Time a task may take in all, reads included: a stuck store cannot hold an upload forever. */
  totalMs: number;
  /** A reader must load its parsers within this (tsx compiles them on the first start). */
  startMs: number;
  /** V8 heap of a reader process: past it that process dies, not the server. */
  heapMb: number;
  /** Readers that render previews: they load libvips, not the sniffers, as they start. */
  previews?: true;
}

export const DEFAULT_METADATA_LIMITS: MetadataLimits = { workers: 2, busyMs: 2_000, totalMs: 30_000, startMs: 30_000, heapMb: 96 };

/**
 * Previews decode whole images (sharp, in native memory outside the V8 heap): one process, so
 * a burst of photos queues instead of taking both cores, and more time per task.
 */
export const PREVIEW_LIMITS: MetadataLimits = { workers: 1, busyMs: 30_000, totalMs: 120_000, startMs: 30_000, heapMb: 96, previews: true };

/**
 * A task ended by the total deadline (`totalMs`) with CPU budget left: the time went to waiting,
 * for the store's range reads or for a core on a busy machine, not to the file's own work.
 */
export const OUT_OF_TIME = 'out of time';

interface Job {
  task: MetadataTask;
  read: ReadRange | null;
  resolve(result: TaskResult | null | typeof OUT_OF_TIME): void;
}

interface Slot {
  child: ChildProcess;
  ready: Promise<boolean>;
  /** Called with the worker's messages for the running job; null while idle. */
  onMessage: ((message: TaskMessage) => void) | null;
  /** Ends the running job with no result (the reader exited). */
  onFailure: (() => void) | null;
}

/**
 * Issue 8 item 1 (design §7): every parser of uploaded bytes runs here, in child processes
 * with a heap limit and a deadline (spawn-reader.ts says why not worker threads). A task that
 * overruns gets its reader killed and answers null; the upload then goes on without that
 * metadata (spec §3 allows null sizes). Readers are kept between tasks (starting one under tsx
 * costs about half a second) and unref'd, so an idle pool never keeps the server alive.
 */
export class MetadataPool {
  private readonly idle: Slot[] = [];
  private readonly waiting: Job[] = [];
  private live = 0;
  private nextId = 1;
  private closed = false;
  private readonly all = new Set<ChildProcess>();

  constructor(private readonly limits: MetadataLimits = DEFAULT_METADATA_LIMITS) {}

  /** Type and image size from the head (file-type, image-size); null when the worker could not say. */
  async kind(head: Buffer, size: number): Promise<KindResult | null> {
    return (await this.submit({ task: 'kind', head, size }, null)) as KindResult | null;
  }

  /** A video's width and height (mp4box or music-metadata), reading ranges past the head through `read`. */
  async videoSize(mime: string, head: Buffer, size: number, read: ReadRange): Promise<SizeResult | null> {
    return (await this.submit({ task: 'video', mime, head, size }, read)) as SizeResult | null;
  }

  /**
   * WebP previews of a listed image (render-previews.ts), the file read through `read`; null on
   * any failure of the image's own (broken, a bomb, past its CPU budget), `OUT_OF_TIME` when the
   * deadline passed first. Nobody waits for previews, so the queue can tell the two apart.
   */
  async previews(size: number, read: ReadRange): Promise<PreviewResult[] | null | typeof OUT_OF_TIME> {
    return (await this.submit({ task: 'previews', size }, read, true)) as PreviewResult[] | null | typeof OUT_OF_TIME;
  }

  /** Process ids of the running readers (for operators' tools and for tests that end one). */
  readerPids(): number[] {
    return [...this.all].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.resolve(null);
    for (const child of this.all) child.kill('SIGKILL');
  }

  /** An upload waits for its type and size: for it, a deadline passed is no answer like any other. */
  private submit(task: MetadataTask, read: ReadRange | null, tellsLate = false): Promise<TaskResult | null | typeof OUT_OF_TIME> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiting.push({ task, read, resolve: (result) => resolve(result === OUT_OF_TIME && !tellsLate ? null : result) });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      let slot = this.idle.pop();
      if (!slot) {
        if (this.live >= this.limits.workers) return;
        slot = this.start();
      }
      const job = this.waiting.shift() as Job;
      void this.run(slot, job);
    }
  }

  private start(): Slot {
    const child = spawnReader('metadata-worker', this.limits.heapMb, this.limits.previews ? [PREVIEWS_READER] : []);
    // An idle reader must not keep the server running (nor a test runner).
    child.unref();
    child.channel?.unref();
    this.live += 1;
    this.all.add(child);
    let markReady: (ok: boolean) => void = () => {};
    const slot: Slot = { child, ready: new Promise((r) => (markReady = r)), onMessage: null, onFailure: null };
    // Ref'd: a job is waiting for this reader, so the process must stay up until it answers.
    const startTimer = setTimeout(() => child.kill('SIGKILL'), this.limits.startMs);
    child.on('message', (message: FromWorker) => {
      if ('ready' in message) {
        clearTimeout(startTimer);
        lowerPriority(child);
        markReady(true);
      } else slot.onMessage?.(message);
    });
    // A failed spawn or send reports here and then exits (or never started): 'exit' ends the slot.
    child.on('error', () => child.kill('SIGKILL'));
    child.once('exit', () => {
      clearTimeout(startTimer);
      markReady(false);
      this.live -= 1;
      this.all.delete(child);
      const index = this.idle.indexOf(slot);
      if (index >= 0) this.idle.splice(index, 1);
      slot.onFailure?.();
      if (!this.closed) this.pump();
    });
    return slot;
  }

  private async run(slot: Slot, job: Job): Promise<void> {
    // A reader that never became ready, or ended since: the job gets no answer rather than a second wait.
    if (!(await slot.ready) || !slot.child.connected) return job.resolve(null);
    const id = this.nextId++;
    let busyLeft = this.limits.busyMs;
    let busySince = 0;
    let cpuSince: number | null = null;
    let busyTimer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    // Past a deadline the job ends here and now, whenever the reader's 'exit' arrives.
    const kill = (outcome: null | typeof OUT_OF_TIME) => {
      slot.child.kill('SIGKILL');
      this.all.delete(slot.child);
      finish(outcome, false);
    };
    /** Busy time spent since the clock last started: the reader's CPU, else the wall clock. */
    const spent = () => {
      const cpu = processCpuMs(slot.child.pid);
      return cpu !== null && cpuSince !== null ? cpu - cpuSince : Date.now() - busySince;
    };
    const startBusy = () => {
      busySince = Date.now();
      cpuSince = processCpuMs(slot.child.pid);
      busyTimer = setTimeout(checkBusy, Math.max(0, busyLeft));
    };
    // Checked when the budget would be gone by the wall clock: a reader that had the CPU all along
    // is ended when it was before, one that waited for a core gets the rest of its budget (the
    // total deadline still bounds the wait).
    const checkBusy = () => {
      busyLeft -= spent();
      if (busyLeft <= 0) kill(null);
      else startBusy();
    };
    startBusy();
    // The busy clock would have ended a task past its budget before this.
    const totalTimer = setTimeout(() => kill(OUT_OF_TIME), this.limits.totalMs);
    const finish = (result: TaskResult | null | typeof OUT_OF_TIME, healthy: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(busyTimer);
      clearTimeout(totalTimer);
      slot.onMessage = null;
      slot.onFailure = null;
      job.resolve(result);
      if (healthy && !this.closed) {
        this.idle.push(slot);
        this.pump();
      }
    };
    slot.onFailure = () => finish(null, false);
    slot.onMessage = (message) => {
      if (message.id !== id) return;
      if ('done' in message) return finish(message.done, true);
      // A range read: the busy clock stops while the store answers.
      clearTimeout(busyTimer);
      busyLeft -= spent();
      const reply = (bytes: Buffer | null) => {
        if (settled) return;
        startBusy();
        const answer: ToWorker = { id, readReply: message.read, bytes };
        slot.child.send(answer);
      };
      const read = job.read;
      if (!read) return reply(null);
      // A store may refuse a key by throwing at once (a malformed key) rather than rejecting: in
      // this message handler that would be an uncaught exception ending the process.
      Promise.resolve()
        .then(() => read(message.start, message.end))
        .then(reply, () => reply(null));
    };
    const request: ToWorker = { id, ...job.task };
    slot.child.send(request);
  }
}
