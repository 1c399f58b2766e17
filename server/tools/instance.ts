import crypto from 'node:crypto';
import { sql } from 'kysely';
import { CHUNK_SIZE } from '../../contract/files.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { migrate, openDatabase, type DbHandle } from '../db/index.ts';
import { assertStorageReady, createStorage, type Storage } from '../storage/index.ts';

/** The variables that describe where an instance keeps its records and bytes (design §4). */
export const INSTANCE_VARIABLES = ['DATABASE_URL', 'STORAGE_DRIVER', 'DATA_DIR', 'S3_ENDPOINT', 'S3_REGION', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'] as const;

/** A stop before anything is copied or restored: one message naming the variable to fix. */
export class ToolUsageError extends Error {
  override name = 'ToolUsageError';
}

export interface Instance {
  config: Config;
  db: DbHandle;
  storage: Storage;
  /** Identifies the instance's database and store (never its secrets). */
  fingerprint: string;
  close(): Promise<void>;
}

/**
 * The instance described by `env` with each variable read as `prefix + name` (`TARGET_` for a
 * migration's target). Checks the configuration, the database connection and the store before
 * returning, so a wrong variable stops a tool before it changes anything.
 */
export async function openInstance(env: NodeJS.ProcessEnv, prefix: string): Promise<Instance> {
  const own: Record<string, string> = {};
  for (const name of INSTANCE_VARIABLES) {
    const value = env[prefix + name];
    if (value !== undefined && value !== '') own[name] = value;
  }
  if (prefix && !own.DATABASE_URL) throw new ToolUsageError(`${prefix}DATABASE_URL is required (the target's database: sqlite://… or postgres://…).`);
  if (prefix && (own.STORAGE_DRIVER ?? 'local') === 'local' && !own.DATA_DIR) throw new ToolUsageError(`${prefix}DATA_DIR is required with ${prefix}STORAGE_DRIVER=local.`);
  const rename = (text: string) => (prefix ? text.replace(new RegExp(`\\b(${INSTANCE_VARIABLES.join('|')})\\b`, 'g'), `${prefix}$1`) : text);
  let config: Config;
  try {
    config = loadConfig({ ...own, LOG_LEVEL: 'silent' });
  } catch (err) {
    if (err instanceof ConfigError) throw new ToolUsageError(rename(err.message));
    throw err;
  }
  // Reach the database and the store before changing anything (not even the schema).
  const db = openDatabase(config.databaseUrl);
  const fail = async (what: string, err: unknown) => {
    await db.close();
    return new ToolUsageError(rename(`${what}${err instanceof Error ? err.message : String(err)}`));
  };
  try {
    await sql`select 1`.execute(db.db);
  } catch (err) {
    throw await fail('DATABASE_URL: cannot open the database: ', err);
  }
  const storage = await createStorage(config, { chunkSize: CHUNK_SIZE, log: () => {} });
  try {
    await assertStorageReady(storage);
  } catch (err) {
    throw await fail('', err);
  }
  try {
    await migrate(db.db);
  } catch (err) {
    throw await fail('DATABASE_URL: cannot prepare the database: ', err);
  }
  const where =
    config.storage.driver === 's3' ? `s3:${config.storage.s3.endpoint ?? 'aws'}/${config.storage.s3.bucket ?? ''}` : `local:${config.dataDir}`;
  const dbWhere = config.databaseUrl.replace(/\/\/[^@/]*@/, '//');
  return {
    config,
    db,
    storage,
    fingerprint: crypto.createHash('sha256').update(`${dbWhere}\n${where}`).digest('hex'),
    close: () => db.close(),
  };
}
