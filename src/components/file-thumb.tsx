import { useState } from 'react';
import { fileKind, previewUrl, previewsOf, srcSetOf, type FileKind } from '../lib/file-kind.ts';
import { useRuntimeConfig } from '../lib/runtime-config.ts';
import './file-thumb.css';

interface Props {
  file: { mime_type: string; original_name: string; previews?: unknown };
  /** CSS width the thumbnail is shown at, for `sizes` (the box keeps its aspect ratio). */
  sizes: string;
  /** A picture already in the browser (a just-finished upload's object URL) used until the server's previews exist. */
  localSrc?: string | null;
  className?: string;
}

const KIND_LABEL: Record<FileKind, string> = {
  image: 'Image',
  video: 'Video',
  audio: 'Audio',
  pdf: 'PDF',
  archive: 'Archive',
  text: 'Text',
  other: 'File',
};

/**
 * Issue 11 item 9: a fixed-aspect box (no layout shift while it loads) holding the server's
 * WebP previews through `srcset`, lazily loaded, or an icon for the file's kind.
 */
export function FileThumb({ file, sizes, localSrc, className }: Props) {
  const { filesUrl } = useRuntimeConfig();
  const [broken, setBroken] = useState(false);
  const previews = previewsOf(file);
  const kind = fileKind(file.mime_type);
  const box = `file-thumb${className ? ` ${className}` : ''}`;
  if (!broken && previews.length > 0) {
    const widest = previews[previews.length - 1]!;
    return (
      <div className={box} data-kind={kind}>
        <img
          src={previewUrl(previews[0]!.url, filesUrl)}
          srcSet={srcSetOf(previews, filesUrl)}
          sizes={sizes}
          width={widest.width}
          height={widest.height}
          loading="lazy"
          decoding="async"
          alt={file.original_name}
          onError={() => setBroken(true)}
        />
      </div>
    );
  }
  // SVG never renders inline (design §8), even from this device.
  if (!broken && localSrc && kind === 'image' && file.mime_type !== 'image/svg+xml') {
    return (
      <div className={box} data-kind={kind}>
        <img src={localSrc} alt={file.original_name} decoding="async" onError={() => setBroken(true)} />
      </div>
    );
  }
  return (
    <div className={`${box} file-thumb-icon`} data-kind={kind}>
      <KindIcon kind={kind} />
      <span className="file-thumb-label">{KIND_LABEL[kind]}</span>
    </div>
  );
}

/** Simple line icons (24-unit grid); decorative, the label beside them says the kind. */
function KindIcon({ kind }: { kind: FileKind }) {
  const paths: Record<FileKind, string> = {
    image: 'M4 5h16v14H4z M4 16l5-5 4 4 3-3 4 4 M15.5 9.5a1.5 1.5 0 1 0 0-.01',
    video: 'M3 6h13v12H3z M16 10l5-3v10l-5-3',
    audio: 'M9 18V6l11-2v12 M9 18a3 3 0 1 1-3-3 3 3 0 0 1 3 3z M20 16a3 3 0 1 1-3-3 3 3 0 0 1 3 3z',
    pdf: 'M6 3h9l4 4v14H6z M15 3v4h4 M9 13h6 M9 17h6',
    archive: 'M4 4h16v4H4z M5 8h14v12H5z M10 12h4',
    text: 'M6 3h9l4 4v14H6z M15 3v4h4 M9 11h7 M9 14h7 M9 17h5',
    other: 'M6 3h9l4 4v14H6z M15 3v4h4',
  };
  return (
    <svg className="file-thumb-svg" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path d={paths[kind]} fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" strokeLinecap="round" />
    </svg>
  );
}
