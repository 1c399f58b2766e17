import path from 'node:path';
import type { Config } from '../config.ts';
import { LocalStorage } from './local.ts';
import type { Storage } from './storage.ts';

export function createStorage(config: Config): Storage {
  if (config.storage.driver === 's3') {
    // The S3 driver arrives with the scale-out work; refuse clearly rather than fall back silently.
    throw new Error('STORAGE_DRIVER=s3 is not available in this build yet; use STORAGE_DRIVER=local.');
  }
  return new LocalStorage(path.join(config.dataDir, 'storage'));
}

export type { Storage };
