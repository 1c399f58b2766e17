import { parseBuffer } from 'music-metadata';
import { largestVideo, type VideoSize } from './video-size.ts';

/**
 * Width and height of a WebM or Matroska video from the head already read for the type (spec
 * §3: "when it can be read cheaply"). The Tracks element sits before the first Cluster in the
 * files browsers and phones record (MediaRecorder, muxers following the WebM guidelines), so
 * the head is enough; a file that keeps it further on simply gets no size.
 */
const MATROSKA_VIDEO = new Set(['video/webm', 'video/x-matroska', 'video/matroska']);

export function isMatroskaVideo(mime: string): boolean {
  return MATROSKA_VIDEO.has(mime);
}

/** The largest video track's pixel size, or null when the head does not say. */
export async function measureMatroskaVideo(head: Buffer, mime: string, size: number): Promise<VideoSize | null> {
  try {
    // duration: false keeps the parser from walking every Cluster for a duration we do not need.
    const meta = await parseBuffer(head, { mimeType: mime, size }, { duration: false, skipCovers: true });
    return largestVideo(meta.format.trackInfo.map((track) => ({ width: track.video?.pixelWidth ?? 0, height: track.video?.pixelHeight ?? 0 })));
  } catch {
    // A cut-off or malformed head: the size stays null and the upload goes on (spec §3).
    return null;
  }
}
