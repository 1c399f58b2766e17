/**
 * Parses a `Range` header against a size (RFC 9110 §14). One range only: a multi-range request
 * gets the whole file (allowed by the RFC), an unsatisfiable one `unsatisfiable` (416).
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null;
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return null;
  let start: number;
  let end: number;
  if (a === '') {
    // Suffix range: the last N bytes.
    const n = Number(b);
    if (n === 0 || size === 0) return 'unsatisfiable';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== '' && Number(b) < start) return null;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** Types a browser could run as script on our origin (design §8): never rendered inline. */
export function isActiveType(mime: string): boolean {
  const m = mime.toLowerCase();
  return (
    m === 'text/html' ||
    m === 'application/xhtml+xml' ||
    m === 'image/svg+xml' ||
    m === 'text/xml' ||
    m === 'application/xml' ||
    m.endsWith('+xml') ||
    m.includes('javascript') ||
    m.includes('ecmascript')
  );
}

/**
 * `Content-Disposition` with the original name (RFC 6266 with RFC 5987's `filename*`): an ASCII
 * fallback for old clients and the exact UTF-8 name for the rest.
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
