import { GB, MB } from './constants.ts';

/** Spec §9: GB with two decimals at or above 1073741824 bytes, else MB. */
export function formatBytes(bytes: number): string {
  if (bytes >= GB) return `${(bytes / GB).toFixed(2)} GB`;
  return `${(bytes / MB).toFixed(2)} MB`;
}

/**
 * One file's size. Spec §9's MB/GB rule is for storage statistics; a photo of 300 KB reads
 * '0.29 MB' under it, so single files below 1 MB show KB (and tiny ones bytes).
 */
export function formatFileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < MB) return `${Math.round(bytes / 1024)} KB`;
  return formatBytes(bytes);
}

/** Spec §9: the max file size comes in MB and is shown in GB with two decimals from 1024 MB. */
export function formatMaxFileSize(mb: number): string {
  if (mb >= 1024) return `${(mb / 1024).toFixed(2)} GB`;
  return `${mb} MB`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Spec §9: dates show month-day-year (in the viewer's own time zone). */
export function formatDate(seconds: number): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) return '';
  return `${pad(d.getMonth() + 1)}-${pad(d.getDate())}-${d.getFullYear()}`;
}

/** Characters of a file name shown in a list before its middle gives way (`shortName`). */
export const NAME_SHOWN = 64;
/** Characters kept from a long name's end: the part that tells two photos apart, and the extension. */
const NAME_TAIL = 20;

/**
 * A long file name with its middle left out: "a_very_long_name_a_very_long…_long_name_.png". Cut
 * at the end after three lines, a 120-character name lost its extension, and two names that
 * differ near the end looked the same.
 */
export function shortName(name: string, max = NAME_SHOWN): string {
  const chars = [...name];
  if (chars.length <= max) return name;
  return `${chars.slice(0, max - NAME_TAIL - 1).join('')}…${chars.slice(-NAME_TAIL).join('')}`;
}
