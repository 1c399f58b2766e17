import path from 'node:path';
import type { Config } from '../config.ts';
import { LocalStorage } from './local.ts';
import type { Storage } from './storage.ts';

export interface StorageOptions {
  /** The upload chunk size (the S3 driver keeps pieces inside chunks). */
  chunkSize: number;
  /** Tests only: the S3 driver's piece size (see S3StorageOptions). */
  pieceSize?: number;
  /** Tests only: the S3 driver's STORE_SILENCE_MS. */
  s3SilenceMs?: number;
  log?: (message: string) => void;
}

/**
 * The driver STORAGE_DRIVER names (design §4). The S3 driver and the AWS SDK behind it load only
 * when named (issue 9, a lean process: the SDK alone is ~25 MiB of an idle process).
 */
export async function createStorage(config: Config, options: StorageOptions): Promise<Storage> {
  if (config.storage.driver === 's3') {
    const { S3Storage } = await import('./s3.ts');
    const s3 = config.storage.s3;
    // config.ts refuses STORAGE_DRIVER=s3 without these; the fallbacks only satisfy the types.
    return new S3Storage(
      { ...s3, bucket: s3.bucket ?? '', accessKeyId: s3.accessKeyId ?? '', secretAccessKey: s3.secretAccessKey ?? '' },
      { chunkSize: options.chunkSize, pieceSize: options.pieceSize, silenceMs: options.s3SilenceMs, log: options.log },
    );
  }
  return new LocalStorage(path.join(config.dataDir, 'storage'), { directWrites: config.storage.directWrites, log: options.log });
}

/**
 * Issue 10: a missing bucket or bad credentials stop the server at start with one clear
 * message, rather than failing the first upload.
 */
export class StorageStartError extends Error {
  override name = 'StorageStartError';
}

export async function assertStorageReady(storage: Storage): Promise<void> {
  if (!storage.assertReady) return;
  try {
    await storage.assertReady();
  } catch (err) {
    throw new StorageStartError(err instanceof Error ? err.message : String(err));
  }
}

export type { Storage };
