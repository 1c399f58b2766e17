import type { Database } from '../../db/index.ts';
import { listMimeTypes, readSettings, writeSetting } from './settings.repository.ts';

export interface SiteSettings {
  allow_uploading: boolean;
  maintenance_mode: boolean;
  /** In MB of 1,048,576 bytes (design §6). */
  max_file_size: number;
}

export const DEFAULT_SETTINGS: SiteSettings = { allow_uploading: true, maintenance_mode: false, max_file_size: 1024 };

/** Mainstream types a file host is expected to take out of the box (design §4's default list). */
export const DEFAULT_MIME_TYPES = [
  'image/*',
  'video/*',
  'audio/*',
  'application/pdf',
  'application/zip',
  'application/x-7z-compressed',
  'application/gzip',
  'application/x-tar',
  'text/plain',
  'application/octet-stream',
];

// Other processes of a scaled-out deployment see a change within this long.
const CACHE_MS = 2000;

/**
 * Site settings and the MIME list, read on nearly every request, so they are cached briefly;
 * a write in this process drops the cache at once.
 */
export class SettingsService {
  private cached: { at: number; settings: SiteSettings; mimes: string[] } | null = null;

  constructor(private readonly db: Database) {}

  private async load() {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached;
    const [map, mimes] = await Promise.all([readSettings(this.db), listMimeTypes(this.db)]);
    const settings: SiteSettings = {
      allow_uploading: (map.get('allow_uploading') ?? String(DEFAULT_SETTINGS.allow_uploading)) === 'true',
      maintenance_mode: (map.get('maintenance_mode') ?? String(DEFAULT_SETTINGS.maintenance_mode)) === 'true',
      max_file_size: Number(map.get('max_file_size') ?? DEFAULT_SETTINGS.max_file_size),
    };
    this.cached = { at: Date.now(), settings, mimes };
    return this.cached;
  }

  async get(): Promise<SiteSettings> {
    return (await this.load()).settings;
  }

  async mimeTypes(): Promise<string[]> {
    return (await this.load()).mimes;
  }

  async set<K extends keyof SiteSettings>(key: K, value: SiteSettings[K]): Promise<void> {
    await writeSetting(this.db, key, String(value));
    this.invalidate();
  }

  invalidate(): void {
    this.cached = null;
  }

  async maxFileSizeBytes(): Promise<number> {
    return (await this.get()).max_file_size * 1_048_576;
  }
}
