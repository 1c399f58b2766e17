/**
 * Issue 11 item 9: what a list shows for a file. Server-made previews (WebP renditions on the
 * files host, contract File.previews) when there are some; otherwise an icon for the file's kind.
 * The original file is never used as a list preview (six originals cost 2.9 MB on a phone).
 */
export type FileKind = 'image' | 'video' | 'audio' | 'pdf' | 'archive' | 'text' | 'other';

export interface Preview {
  width: number;
  height: number;
  url: string;
}

const ARCHIVES = /(zip|x-7z|x-rar|vnd\.rar|x-tar|gzip|x-gzip|x-bzip2?|x-xz|zstd|x-compress|java-archive)/;
const TEXTS = /^(text\/|application\/(json|xml|javascript|x-sh|x-yaml|yaml|toml|sql))/;

export function fileKind(mime: string): FileKind {
  const m = mime.toLowerCase();
  if (m.startsWith('image/')) return 'image';
  if (m.startsWith('video/')) return 'video';
  if (m.startsWith('audio/')) return 'audio';
  if (m === 'application/pdf') return 'pdf';
  if (ARCHIVES.test(m)) return 'archive';
  if (TEXTS.test(m)) return 'text';
  return 'other';
}

/**
 * The previews a File object carries, tolerating an API that does not send the field yet
 * (media adds it to contract/files.ts) or sends junk: only well-formed entries, narrowest first.
 */
export function previewsOf(file: object): Preview[] {
  const raw = (file as { previews?: unknown }).previews;
  if (!Array.isArray(raw)) return [];
  return raw
    .filter(
      (p): p is Preview =>
        typeof p === 'object' && p !== null && typeof p.url === 'string' && p.url !== '' && Number(p.width) > 0 && Number(p.height) > 0,
    )
    .sort((a, b) => a.width - b.width);
}

/** Preview urls may be absolute or relative to the files host. */
export function previewUrl(url: string, filesUrl: string): string {
  if (!filesUrl) return url;
  try {
    return new URL(url, filesUrl.replace(/\/*$/, '/')).href;
  } catch {
    return url;
  }
}

/** `srcset` with width descriptors, so the browser picks the smallest rendition that is sharp. */
export function srcSetOf(previews: Preview[], filesUrl: string): string {
  return previews.map((p) => `${previewUrl(p.url, filesUrl)} ${p.width}w`).join(', ');
}
