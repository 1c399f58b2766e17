import { GB, MB } from './constants.ts';

/** Spec §9: GB with two decimals at or above 1073741824 bytes, else MB. */
export function formatBytes(bytes: number): string {
  if (bytes >= GB) return `${(bytes / GB).toFixed(2)} GB`;
  return `${(bytes / MB).toFixed(2)} MB`;
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
