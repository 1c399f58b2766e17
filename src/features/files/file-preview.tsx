import { useState } from 'react';
import type { FileRecord } from '../../../contract/files.ts';

export const MSG_NO_PREVIEW = 'A preview is not available for this file';

export type PreviewKind = 'image' | 'video' | 'audio' | 'none';

/** Spec §2: preview as video, audio or image by mime type; anything else has none. */
export function previewKind(mime: string): PreviewKind {
  if (mime.startsWith('image/') && mime !== 'image/svg+xml') return 'image'; // design §8: SVG is never rendered
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'none';
}

export function FilePreview({ file, src }: { file: FileRecord; src: string }) {
  const [failed, setFailed] = useState(false);
  const kind = previewKind(file.mime_type);
  if (kind === 'none' || failed) return <p className="preview-none">{MSG_NO_PREVIEW}</p>;
  if (kind === 'image')
    return (
      <img
        className="preview"
        src={src}
        alt={file.original_name}
        loading="lazy"
        width={file.width ?? undefined}
        height={file.height ?? undefined}
        onError={() => setFailed(true)}
      />
    );
  if (kind === 'video') return <video className="preview" src={src} controls preload="metadata" onError={() => setFailed(true)} />;
  return <audio className="preview-audio" src={src} controls preload="metadata" onError={() => setFailed(true)} />;
}
