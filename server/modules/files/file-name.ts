/** The longest display name kept (spec §3 `originalname`), in characters (code points). */
export const MAX_NAME_CHARS = 255;

/**
 * Characters removed from display names (issue 8 item 9): C0 and C1 controls and DEL, and the
 * invisible direction marks that make `invoice‮gnp.exe` read as `invoiceexe.png`: the bidi
 * embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), LRM/RLM (U+200E/F) and
 * the Arabic letter mark (U+061C).
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Half a character (a multipart file name can carry one): dropped, never stored as U+FFFD. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// Made on first use: ICU's break-iterator data costs every process ~2.6 MiB resident (bench/README.md),
// and only a name longer than MAX_NAME_CHARS needs it.
let graphemes: Intl.Segmenter | null = null;

/**
 * Cuts to at most `max` code points without splitting a character: whole grapheme clusters
 * (a surrogate pair, an emoji with its modifiers, a letter with its accents) stay or go together.
 */
export function cutToCharacters(text: string, max: number): string {
  if ([...text].length <= max) return text;
  let out = '';
  let used = 0;
  graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  for (const { segment } of graphemes.segment(text)) {
    const n = [...segment].length;
    if (used + n > max) break;
    out += segment;
    used += n;
  }
  return out;
}

/** Keeps a display name safe to store and echo: no path parts, no control or direction characters. */
export function cleanOriginalName(raw: string | undefined | null): string {
  const last = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = cutToCharacters(last.replace(LONE_SURROGATE, '').replace(UNSAFE, '').trim(), MAX_NAME_CHARS).trim();
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned;
}
