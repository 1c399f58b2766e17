import { detectKind, loadSniffers } from '../files/file-kind.ts';
import { isMatroskaVideo, measureMatroskaVideo } from '../files/matroska-size.ts';
import { isIsoBmffVideo, measureIsoBmffVideo } from '../files/video-size.ts';
import { PREVIEWS_READER, type FromWorker, type MetadataTask, type SizeResult, type ToWorker } from './metadata-protocol.ts';
import { loadRenderer, renderPreviews } from './render-previews.ts';

/**
 * The child process of metadata-pool.ts: runs the parsers of uploaded bytes (file-type,
 * image-size, mp4box, music-metadata) one task at a time. Whatever they do with hostile bytes
 * (loop, allocate without end) happens here, where the pool's deadline and heap limit end it.
 */
const send = process.send?.bind(process);
if (!send) throw new Error('metadata-worker.ts runs only as a child process with an IPC channel');
// The parsers load as the worker starts, before it says it is ready: the pool lowers its
// priority then and starts the first task's deadline, neither of which is for loading them.
// A previews reader (metadata-pool.ts, PREVIEW_LIMITS) loads libvips instead, which it alone needs.
const parsersLoaded = process.argv.includes(PREVIEWS_READER) ? loadRenderer() : loadSniffers();

const pendingReads = new Map<number, (bytes: Buffer | null) => void>();
let nextRead = 1;

function reply(message: FromWorker): void {
  send?.(message);
}

function readRange(id: number, start: number, end: number): Promise<Buffer> {
  const read = nextRead++;
  return new Promise((resolve, reject) => {
    pendingReads.set(read, (bytes) => (bytes ? resolve(bytes) : reject(new Error('range read failed'))));
    reply({ id, read, start, end });
  });
}

async function run(id: number, task: MetadataTask) {
  const read = (start: number, end: number) => readRange(id, start, end);
  if (task.task === 'previews') return renderPreviews(task.size, read);
  const head = Buffer.from(task.head.buffer, task.head.byteOffset, task.head.byteLength);
  if (task.task === 'kind') return detectKind(head, task.size);
  const video = isIsoBmffVideo(task.mime)
    ? await measureIsoBmffVideo({ head, size: task.size, read })
    : isMatroskaVideo(task.mime)
      ? await measureMatroskaVideo(head, task.mime, task.size)
      : null;
  const size: SizeResult = { width: video?.width ?? null, height: video?.height ?? null };
  return size;
}

process.on('message', (message: ToWorker) => {
  if ('readReply' in message) {
    const settle = pendingReads.get(message.readReply);
    pendingReads.delete(message.readReply);
    settle?.(message.bytes ? Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength) : null);
    return;
  }
  run(message.id, message).then(
    (done) => reply({ id: message.id, done }),
    () => reply({ id: message.id, done: null }),
  );
});
// The parent going away (crash, kill -9) leaves nothing for this process to do.
process.on('disconnect', () => process.exit(0));
// Ready even if they failed to load: each task then answers null, as for any parser's failure.
void parsersLoaded.catch(() => {}).then(() => reply({ ready: true }));
