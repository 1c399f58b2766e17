import type { Redis } from 'ioredis';
import { CHUNK_SIZE } from '../contract/files.ts';
import type { Config } from './config.ts';
import { migrate, openDatabase, type Database, type Dialect, type OpenOptions } from './db/index.ts';
import { createCaptchaVerifier, type CaptchaVerifier } from './modules/auth/captcha.ts';
import { MetadataPool, PREVIEW_LIMITS, type MetadataLimits } from './modules/media/metadata-pool.ts';
import { AccountRemovals, type AccountRemovalOptions } from './modules/users/account-removals.ts';
import { PreviewQueue } from './modules/media/preview-queue.ts';
import { SettingsService } from './modules/settings/settings.service.ts';
import { assertStorageReady, createStorage, type Storage } from './storage/index.ts';
import { closeRedis, connectRedis } from './redis.ts';

/** Key prefix of the rate-limit counters in Redis. */
export const RATE_LIMIT_NAMESPACE = 'stash-rate-limit:';

/** Everything a route needs, built once per process and handed in (style habit 5). */
export interface Deps {
  config: Config;
  db: Database;
  dialect: Dialect;
  storage: Storage;
  captcha: CaptchaVerifier;
  settings: SettingsService;
  /** Bytes of every upload chunk but the last: CHUNK_SIZE (spec §9) outside tests. */
  uploadChunkSize: number;
  /** How long a chunk's write lease lasts unrenewed (design §7); a crashed writer's chunk can be resumed after it. */
  uploadLeaseMs: number;
  /** Shared rate-limit counters (design §6 across API processes); null without REDIS_URL or with RATE_LIMITS=off. */
  redis: Redis | null;
  rateLimitNamespace: string;
  /** Reads the type and size of uploaded bytes in child processes with limits (issue 8 item 1). */
  metadata: MetadataPool;
  /** Makes WebP previews of listed images in the background (issue 11 item 9). */
  previews: PreviewQueue;
  /** Removes the accounts admins removed, after the answer when they are large (spec §4 admin/set/remove). */
  accountRemovals: AccountRemovals;
  close(): Promise<void>;
}

export interface DepsOverrides {
  storage?: Storage;
  captcha?: CaptchaVerifier;
  db?: OpenOptions;
  /**
   * Tests only: the database is a copy of one the migrator brought to the latest migration
   * (tests/helpers/pg-template.ts), so its whole-catalog check is skipped.
   */
  migrated?: boolean;
  /** Tests only: a smaller chunk size, so a 3-chunk upload needs kilobytes, not 240 MB. */
  uploadChunkSize?: number;
  /** Tests only: smaller S3 pieces (checkpoints), so a kilobyte-sized test cuts a chunk between pieces. */
  s3PieceSize?: number;
  /** Tests only: how long the S3 store may stay silent on a request (STORE_SILENCE_MS). */
  s3SilenceMs?: number;
  /** Tests only: a shorter chunk lease, so a resume after a simulated crash need not wait 15 s. */
  uploadLeaseMs?: number;
  /** Tests only: a fresh key prefix, so runs sharing one Redis don't count each other's requests. */
  rateLimitNamespace?: string;
  /** Tests only: hold a removal between its batches, or answer it sooner. */
  accountRemovals?: AccountRemovalOptions;
  /**
   * Tests only: the previews readers' limits, read at each task, so a test can give a render a
   * short deadline (a store that stalls it need not take 120 s) and the backfill after it the real one.
   */
  previewLimits?: MetadataLimits;
}

/** Design §7: a chunk's writer renews its lease every 3 s; a writer silent for 15 s is presumed dead. */
export const UPLOAD_LEASE_MS = 15_000;

/**
 * The fault-injection suite kills and restarts the real server process, so it cannot hand in
 * overrides: these knobs come from the environment, and only under NODE_ENV=test.
 */
function testKnob(name: string): number | undefined {
  if (process.env.NODE_ENV !== 'test') return undefined;
  const n = Number(process.env[name]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** One line when PostgreSQL ends connections, not one per connection: a restart ends them all at once. */
function connectionLostLog(log: (message: string) => void): (err: Error) => void {
  let last = -Infinity;
  return (err) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    log(`PostgreSQL closed a connection (${err.message}); the next query opens a new one`);
  };
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const log = (message: string) => {
    if (config.logLevel !== 'silent') console.warn(message);
  };
  const handle = openDatabase(config.databaseUrl, { ...overrides.db, onConnectionLost: connectionLostLog(log) });
  try {
    if (!overrides.migrated) await migrate(handle.db, overrides.db?.searchPath);
    await handle.prime();
  } catch (err) {
    await handle.close();
    throw err;
  }
  const uploadChunkSize = overrides.uploadChunkSize ?? testKnob('STASH_TEST_CHUNK_SIZE') ?? CHUNK_SIZE;
  const storage = overrides.storage ?? (await createStorage(config, { chunkSize: uploadChunkSize, pieceSize: overrides.s3PieceSize ?? testKnob('STASH_TEST_S3_PIECE_SIZE'), s3SilenceMs: overrides.s3SilenceMs, log }));
  try {
    await assertStorageReady(storage);
  } catch (err) {
    await handle.close();
    throw err;
  }
  // Redis holds nothing but rate-limit counters, so with RATE_LIMITS=off there is nothing to connect for.
  const redis = config.redisUrl && config.rateLimits ? await connectRedis(config.redisUrl, log) : null;
  const metadata = new MetadataPool();
  const previewReaders = new MetadataPool(overrides.previewLimits ?? PREVIEW_LIMITS);
  const previews = new PreviewQueue(handle.db, storage, previewReaders, log);
  const accountRemovals = new AccountRemovals(
    { db: handle.db, dialect: handle.dialect, storage },
    {
      log: (message, err) => {
        if (config.logLevel !== 'silent') console.error(message, err ?? '');
      },
      ...overrides.accountRemovals,
    },
  );
  return {
    config,
    db: handle.db,
    dialect: handle.dialect,
    storage,
    captcha: overrides.captcha ?? createCaptchaVerifier(config),
    settings: new SettingsService(handle.db),
    uploadChunkSize,
    uploadLeaseMs: overrides.uploadLeaseMs ?? testKnob('STASH_TEST_LEASE_MS') ?? UPLOAD_LEASE_MS,
    redis,
    rateLimitNamespace: overrides.rateLimitNamespace ?? RATE_LIMIT_NAMESPACE,
    metadata,
    previews,
    accountRemovals,
    close: async () => {
      // A removal stops between two batches, its account left marked for the next start.
      await accountRemovals.stop();
      // The queue stops taking work first; ending the readers then ends the job it is waiting on.
      const queueStopped = previews.close();
      await Promise.all([metadata.close(), previewReaders.close()]);
      await queueStopped;
      if (redis) await closeRedis(redis);
      await handle.close();
    },
  };
}
