import path from 'node:path';
import type { Config } from '../config.ts';
import { LocalStorage } from './local.ts';
import { S3Storage } from './s3.ts';
import type { Storage } from './storage.ts';

export interface StorageOptions {
  /** The upload chunk size (the S3 driver keeps pieces inside chunks). */
  chunkSize: number;
  log?: (message: string) => void;
}

/** The driver STORAGE_DRIVER names (design §4). */
export function createStorage(config: Config, options: StorageOptions): Storage {
  if (config.storage.driver === 's3') {
    const s3 = config.storage.s3;
    // config.ts refuses STORAGE_DRIVER=s3 without these; the fallbacks only satisfy the types.
    return new S3Storage(
      { ...s3, bucket: s3.bucket ?? '', accessKeyId: s3.accessKeyId ?? '', secretAccessKey: s3.secretAccessKey ?? '' },
      { chunkSize: options.chunkSize, log: options.log },
    );
  }
  return new LocalStorage(path.join(config.dataDir, 'storage'));
}

/**
 * Issue 10: a missing bucket or bad credentials stop the server at start with one clear
 * message, rather than failing the first upload.
 */
export class StorageStartError extends Error {
  override name = 'StorageStartError';
}

export async function assertStorageReady(storage: Storage): Promise<void> {
  if (!(storage instanceof S3Storage)) return;
  try {
    await storage.assertReady();
  } catch (err) {
    throw new StorageStartError(err instanceof Error ? err.message : String(err));
  }
}

export type { Storage };
