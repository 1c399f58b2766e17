import { BoxParser, createFile, Log, MP4BoxBuffer, type ISOFile, type Movie, type MultiBufferStream, type Track } from 'mp4box';

/**
 * Width and height of an ISO-BMFF video (MP4, MOV, M4V, 3GP), read cheaply (spec §3: "for
 * video when it can be read cheaply"). The sizes sit in the `moov` box, which is at the start
 * of a "faststart" file but after the media data (`mdat`) in most files a phone records. mp4box
 * parses what it is given and answers the file position it wants next, so an `mdat` of any size
 * is stepped over without being read: a moov-at-end file costs the head plus a read or two.
 */

/** Reads `[start, end)` of the file. */
export type ReadRange = (start: number, end: number) => Promise<Buffer>;

export interface VideoSize {
  width: number;
  height: number;
}

export interface ProbeLimits {
  /** First read after a jump; doubled while mp4box keeps asking for the bytes right after. */
  window: number;
  maxWindow: number;
  /**
   * Bytes read beyond the head. The moov of a long video holds per-sample tables (about 4-12
   * bytes per frame and track): two hours of 30 fps video with AAC audio come to roughly 4 MB,
   * so 8 MiB covers what people upload and still bounds the work and memory per upload.
   */
  maxBytes: number;
  /** Reads beyond the head: growth to 1 MiB windows reaches 8 MiB in about 12, the rest is for jumps over several boxes. */
  maxReads: number;
}

export const DEFAULT_PROBE_LIMITS: ProbeLimits = {
  window: 64 * 1024,
  maxWindow: 1024 * 1024,
  maxBytes: 8 * 1024 * 1024,
  maxReads: 24,
};

/**
 * The MIME types file-type gives a file that starts with a box header: an `ftyp` box (mp4,
 * f4v, m4v, 3gp, 3g2, QuickTime's `qt` brand) or a bare QuickTime atom (`moov`, `mdat`, `free`,
 * `wide`). WebM, Matroska and AVI are not boxes and stay without a size (server/README.md).
 */
const ISO_BMFF_VIDEO = new Set(['video/mp4', 'video/quicktime', 'video/x-m4v', 'video/3gpp', 'video/3gpp2']);

export function isIsoBmffVideo(mime: string): boolean {
  return ISO_BMFF_VIDEO.has(mime);
}

// mp4box logs to the console, and its box parser reports malformed boxes with Log.error
// without the file, which prints whatever the level. Uploads are untrusted bytes, so a bad
// file must not write to the server's output: keep only the forwarding to the file's onError.
Log.setLogLevel(Log.error);
Log.error = (module: string, msg?: string, isofile?: ISOFile) => {
  isofile?.onError?.(module, msg ?? '');
};

// Issue 8 item 1: mp4box's `stsz` parser repeats a fixed sample size once per sample the box
// claims, so 20 bytes claiming 2^32-1 samples grew one array until the process aborted. With
// a fixed size there is nothing per sample to keep (the per-sample lists are not built either,
// below); a table of sizes still reads one entry per 4 bytes present, bounded by the bytes read.
BoxParser.box.stsz.prototype.parse = function parseStsz(this: InstanceType<typeof BoxParser.box.stsz>, stream: MultiBufferStream) {
  this.parseFullHeader(stream);
  this.sample_sizes = [];
  if (this.version !== 0) return;
  this.sample_size = stream.readUint32();
  this.sample_count = stream.readUint32();
  if (this.sample_size !== 0) return;
  for (let i = 0; i < this.sample_count; i++) this.sample_sizes.push(stream.readUint32());
};

/**
 * Feeds mp4box the head, then the ranges it asks for, within `limits`. Resolves with the size,
 * or null for anything else (no moov within the budget, a parse error, no video track, a zero
 * size): a missing size never fails the upload (spec §3 allows null).
 */
export async function measureIsoBmffVideo(
  source: { head: Buffer; size: number; read: ReadRange },
  limits: ProbeLimits = DEFAULT_PROBE_LIMITS,
): Promise<VideoSize | null> {
  const file = createFile();
  // Issue 8 item 1: once the moov is parsed mp4box builds one object per sample of every track
  // from the counts the tables claim (`stsz` with a fixed sample size claims any count in 20
  // bytes): 3,000,000 samples took 5 s and 1 GB, 2^32-1 killed the process. A size needs none
  // of them, so the lists stay empty and the work is bounded by the bytes read.
  file.buildTrakSampleLists = (trak) => {
    trak.samples = [];
    trak.samples_duration = 0;
    trak.samples_size = 0;
  };
  // Set from mp4box's callbacks, which run inside appendBuffer.
  const state: { info: Movie | null; failed: boolean } = { info: null, failed: false };
  file.onReady = (movie) => {
    state.info = movie;
  };
  file.onError = () => {
    state.failed = true;
  };
  const done = () => state.info !== null || state.failed;

  try {
    let next = append(file, source.head, 0, source.head.length >= source.size);
    let readBytes = 0;
    let reads = 0;
    let window = limits.window;
    let lastEnd = source.head.length;
    while (!done() && next !== null && next < source.size) {
      if (reads >= limits.maxReads || readBytes >= limits.maxBytes) return null;
      // Bytes right after the last read mean a box is still being filled in: read more at once.
      window = next === lastEnd ? Math.min(window * 2, limits.maxWindow) : limits.window;
      const end = Math.min(source.size, next + window, next + (limits.maxBytes - readBytes));
      const bytes = await source.read(next, end);
      if (bytes.length === 0) return null;
      reads += 1;
      readBytes += bytes.length;
      lastEnd = next + bytes.length;
      const wanted = append(file, bytes, next, lastEnd >= source.size);
      // mp4box answers a position it already has when it cannot go on (a box too small to be
      // one, say); stopping there is what keeps a bad file from spinning through the budget.
      next = wanted !== null && wanted > next ? wanted : null;
    }
  } catch {
    // mp4box throws on some malformed boxes (reads past a box's end, bad tables).
    return null;
  }
  // A moov that parsed is good even if bytes after it in the same read were not.
  if (state.info === null) return null;
  return displaySize(state.info.videoTracks);
}

function append(file: ISOFile, bytes: Buffer, fileStart: number, last: boolean): number | null {
  // mp4box keeps the buffer, so it gets its own copy rather than a view into a pooled Buffer.
  const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  const next: number | undefined = file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, fileStart), last);
  return typeof next === 'number' && Number.isFinite(next) ? next : null;
}

/**
 * The largest video track (by area), so a cover-art or thumbnail track does not win over the
 * main picture. Its size is the track header's (`tkhd`): that is the display size, which
 * includes a non-square pixel aspect, whereas the sample entry holds the coded size. A `tkhd`
 * of 0×0 (some muxers leave it empty) falls back to the sample entry. A 90° or 270° rotation
 * in the track matrix (portrait phone videos) swaps the two, as players show them.
 */
function displaySize(tracks: Track[]): VideoSize | null {
  return largestVideo(
    tracks.map((track) => {
      const fromHeader = track.track_width > 0 && track.track_height > 0;
      const width = Math.round(fromHeader ? track.track_width : (track.video?.width ?? 0));
      const height = Math.round(fromHeader ? track.track_height : (track.video?.height ?? 0));
      return isQuarterTurn(track.matrix) ? { width: height, height: width } : { width, height };
    }),
  );
}

/** The video track people watch: the largest by area, so a thumbnail or cover track never wins. Empty sizes are skipped. */
export function largestVideo(sizes: VideoSize[]): VideoSize | null {
  let best: VideoSize | null = null;
  for (const size of sizes) {
    if (size.width > 0 && size.height > 0 && (!best || size.width * size.height > best.width * best.height)) best = size;
  }
  return best;
}

/** Matrix [a b u; c d v; x y w]: a quarter turn has a = d = 0 and b, c non-zero. */
function isQuarterTurn(matrix: Track['matrix'] | undefined): boolean {
  if (!matrix || matrix.length < 5) return false;
  const [a, b, , c, d] = Array.from(matrix);
  return a === 0 && d === 0 && b !== 0 && c !== 0;
}
