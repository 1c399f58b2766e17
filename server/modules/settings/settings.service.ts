import type { Database } from '../../db/index.ts';
import { listMimeTypes, readSettings, writeSetting } from './settings.repository.ts';

export interface SiteSettings {
  allow_uploading: boolean;
  maintenance_mode: boolean;
  /** In MB of 1,048,576 bytes (design §6). */
  max_file_size: number;
}

/** The unit of every size setting (design §6): an MB of 1,048,576 bytes. */
export const MB = 1_048_576;

export const DEFAULT_SETTINGS: SiteSettings = { allow_uploading: true, maintenance_mode: false, max_file_size: 1024 };

export const ROLE_NAMES = ['default', 'trusted', 'mod', 'admin'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/**
 * Per-user bounds (design §6, issue 8 item 4): what one account may hold open. Sizes in MB of
 * 1,048,576 bytes like max_file_size; a storage quota of null means unlimited.
 */
export interface UploadLimits {
  max_unfinished_uploads: number;
  max_unfinished_size: number;
  max_url_fetches: number;
  storage_quota: Record<RoleName, number | null>;
}
export type CountLimit = Exclude<keyof UploadLimits, 'storage_quota'>;

export const DEFAULT_LIMITS: UploadLimits = {
  max_unfinished_uploads: 20,
  max_unfinished_size: 2048,
  max_url_fetches: 3,
  storage_quota: { default: null, trusted: null, mod: null, admin: null },
};

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
  private cached: { at: number; settings: SiteSettings; limits: UploadLimits; mimes: string[] } | null = null;

  constructor(private readonly db: Database) {}

  private async load() {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached;
    const [map, mimes] = await Promise.all([readSettings(this.db), listMimeTypes(this.db)]);
    this.cached = { at: Date.now(), settings: readSiteSettings(map), limits: readLimits(map), mimes };
    return this.cached;
  }

  async get(): Promise<SiteSettings> {
    return (await this.load()).settings;
  }

  async limits(): Promise<UploadLimits> {
    return (await this.load()).limits;
  }

  async setLimit(key: CountLimit, value: number): Promise<void> {
    await writeSetting(this.db, key, String(value));
    this.invalidate();
  }

  /** `mb` null lifts the role's quota. */
  async setStorageQuota(role: RoleName, mb: number | null): Promise<void> {
    await writeSetting(this.db, `storage_quota_${role}`, mb === null ? '' : String(mb));
    this.invalidate();
  }

  /** The caller's storage quota in bytes, or null when unlimited. */
  async storageQuotaBytes(role: RoleName): Promise<number | null> {
    const mb = (await this.limits()).storage_quota[role];
    return mb === null ? null : mb * MB;
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
    return (await this.get()).max_file_size * MB;
  }
}

export function readSiteSettings(map: Map<string, string>): SiteSettings {
  return {
    allow_uploading: (map.get('allow_uploading') ?? String(DEFAULT_SETTINGS.allow_uploading)) === 'true',
    maintenance_mode: (map.get('maintenance_mode') ?? String(DEFAULT_SETTINGS.maintenance_mode)) === 'true',
    max_file_size: Number(map.get('max_file_size') ?? DEFAULT_SETTINGS.max_file_size),
  };
}

export function readLimits(map: Map<string, string>): UploadLimits {
  const count = (key: CountLimit) => {
    const n = Number(map.get(key) ?? DEFAULT_LIMITS[key]);
    return Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_LIMITS[key];
  };
  const quota = (role: RoleName) => {
    const raw = map.get(`storage_quota_${role}`);
    const n = Number(raw);
    return raw && Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_LIMITS.storage_quota[role];
  };
  return {
    max_unfinished_uploads: count('max_unfinished_uploads'),
    max_unfinished_size: count('max_unfinished_size'),
    max_url_fetches: count('max_url_fetches'),
    storage_quota: { default: quota('default'), trusted: quota('trusted'), mod: quota('mod'), admin: quota('admin') },
  };
}
