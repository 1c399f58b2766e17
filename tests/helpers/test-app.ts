import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../server/config.ts';
import { createDeps, type Deps, type DepsOverrides } from '../../server/deps.ts';
import { buildApi, buildFilesHost } from '../../server/app.ts';
import { bootstrap } from '../../server/modules/bootstrap.ts';
import { createSession } from '../../server/modules/auth/caller.repository.ts';
import type { Dialect } from '../../server/db/index.ts';
import { newId, nowSeconds } from '../../server/lib/ids.ts';
import { hashPassword } from '../../server/lib/passwords.ts';
import type { createTestBucket } from './s3-server.ts';
import { createTestSchema, dropTestSchema } from './pg-template.ts';
import { localProbe, type StoreProbe } from './store-probe.ts';

/** Style habit 3: every API and repository test runs on each database that is reachable. */
export const DIALECTS: Dialect[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestUser {
  id: string;
  username: string;
  password: string;
  token: string;
}

export interface CallResult<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface TestApp {
  deps: Deps;
  api: FastifyInstance;
  files: FastifyInstance;
  dataDir: string;
  /** What the store holds (local disk, or the S3 bucket under TEST_STORAGE=s3). */
  store: StoreProbe;
  admin: TestUser;
  /** The invite key the bootstrap printed. */
  inviteKey: string;
  /** POST a JSON body to the API (spec §7: every call is a POST), through Fastify's inject. */
  call<T = Record<string, unknown>>(path: string, body?: unknown, init?: { token?: string; headers?: Record<string, string> }): Promise<CallResult<T>>;
  createUser(options?: { role?: 'default' | 'trusted' | 'mod' | 'admin'; username?: string; password?: string; banned?: boolean }): Promise<TestUser>;
  close(): Promise<void>;
}

let userCounter = 0;

/** A fresh app per test (style habit 9): its own data folder and its own database or schema. */
export async function createTestApp(
  dialect: Dialect = 'sqlite',
  env: Record<string, string> = {},
  overrides: DepsOverrides = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-test-'));
  let databaseUrl = `sqlite://${path.join(dataDir, 'stash.db')}`;
  let dropSchema: (() => Promise<void>) | null = null;
  let dbOptions = overrides.db;
  let migrated = false;
  if (dialect === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set');
    const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
    await createTestSchema(url, schema);
    migrated = true;
    databaseUrl = url;
    dbOptions = { ...dbOptions, searchPath: schema, poolSize: 5 };
    dropSchema = () => dropTestSchema(url, schema);
  }
  // TEST_STORAGE=s3 (.ci/run): the same tests on a fresh bucket of the S3 test server.
  // The AWS SDK is imported only then: loading it took ~130 ms of every test file's start.
  let bucket: Awaited<ReturnType<typeof createTestBucket>> | null = null;
  let store = localProbe(dataDir);
  if (process.env.TEST_STORAGE === 's3' && !overrides.storage && env.STORAGE_DRIVER === undefined) {
    const [s3, { s3Probe }] = await Promise.all([import('./s3-server.ts'), import('./s3-store-probe.ts')]);
    const endpoint = await s3.s3Endpoint();
    bucket = await s3.createTestBucket(endpoint);
    env = { ...s3.s3Env(endpoint, bucket.bucket), ...env };
    store = s3Probe(bucket.client, bucket.bucket);
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    RATE_LIMITS: 'off',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin-password-1',
    ...env,
  });
  const deps = await createDeps(config, { ...overrides, db: dbOptions, migrated });
  const boot = await bootstrap(deps);
  const api = await buildApi(deps);
  let closing: Promise<void> | undefined;
  const files = await buildFilesHost(deps);
  const adminRow = await deps.db.selectFrom('users').select(['id', 'username']).where('role', '=', 'admin').executeTakeFirstOrThrow();
  const admin: TestUser = { id: adminRow.id, username: adminRow.username, password: 'admin-password-1', token: await createSession(deps.db, adminRow.id) };

  const call: TestApp['call'] = async (url, body = {}, init = {}) => {
    const payload = init.token !== undefined && body && typeof body === 'object' && !Array.isArray(body) ? { token: init.token, ...body } : body;
    const res = await api.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...init.headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    let parsed: unknown = null;
    try {
      parsed = res.json();
    } catch {
      parsed = res.body;
    }
    return { status: res.statusCode, body: parsed as never, headers: res.headers };
  };

  const createUser: TestApp['createUser'] = async (options = {}) => {
    userCounter += 1;
    const username = options.username ?? `user${userCounter}_${crypto.randomBytes(2).toString('hex')}`;
    const password = options.password ?? `password-${userCounter}`;
    const id = newId();
    await deps.db
      .insertInto('users')
      .values({ id, username, username_lower: username.toLowerCase(), password_hash: await hashPassword(password), role: options.role ?? 'default', banned: options.banned ? 1 : 0, time_created: nowSeconds() })
      .execute();
    return { id, username, password, token: await createSession(deps.db, id) };
  };

  return {
    deps,
    api,
    files,
    dataDir,
    store,
    admin,
    inviteKey: boot.inviteKey ?? '',
    call,
    createUser,
    // Once, however often it is called: a file's afterEach closes the app of its last test again
    // when a later test made none, and on S3 a second drop of the bucket failed that later test.
    close: () =>
      (closing ??= (async () => {
        await api.close();
        await files.close();
        await deps.close();
        if (dropSchema) await dropSchema();
        await bucket?.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}
