import path from 'node:path';
import { ensureServerBuilt } from '../../scripts/server-build.mjs';
import { forgetMigratedSchema, saveMigratedSchema } from '../helpers/pg-template.ts';

/**
 * Once, before any server test file runs: the compiled server, rebuilt when any source is newer
 * (~1 s), whose metadata reader the servers under test fork (server/modules/media/spawn-reader.ts,
 * `STASH_TEST_READERS`) rather than starting it from the sources under tsx each time, and which
 * the tests that start a server process run (`STASH_TEST_SERVER`, tests/helpers/server-process.ts),
 * as `npm start` does. Test files and the processes they spawn inherit the variables.
 * And on PostgreSQL, the migrated schema every test app copies (tests/helpers/pg-template.ts).
 */
export default async function setup(): Promise<() => void> {
  const entry = await ensureServerBuilt(path.resolve(import.meta.dirname, '../..'));
  process.env.STASH_TEST_READERS = path.dirname(entry);
  process.env.STASH_TEST_SERVER = entry;
  if (process.env.TEST_DATABASE_URL) await saveMigratedSchema(process.env.TEST_DATABASE_URL);
  return forgetMigratedSchema;
}
