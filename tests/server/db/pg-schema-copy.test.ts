import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { copyMigratedSchema, dropTestSchema, migrateSchema } from '../../helpers/pg-template.ts';

const url = process.env.TEST_DATABASE_URL ?? '';

/**
 * What PostgreSQL knows of a schema's objects, its own name written as `$schema` so two schemas
 * compare: columns with their types and defaults, constraints, indexes, triggers, functions,
 * sequences, and the migrations the migrator recorded.
 */
async function catalog(client: pg.Client, schema: string) {
  const rows = async (text: string) => (await client.query<{ d: string }>(text, [schema])).rows.map((r) => r.d.replaceAll(schema, '$schema')).sort();
  return {
    columns: await rows(`select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as d
      from information_schema.columns where table_schema = $1`),
    constraints: await rows(`select c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) as d
      from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = $1`),
    indexes: await rows(`select indexdef as d from pg_indexes where schemaname = $1`),
    triggers: await rows(`select pg_get_triggerdef(t.oid) as d from pg_trigger t join pg_class c on c.oid = t.tgrelid
      join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and not t.tgisinternal`),
    functions: await rows(`select p.proname || ' ' || pg_get_functiondef(p.oid) as d from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1`),
    sequences: await rows(`select sequencename || ' ' || coalesce(last_value::text, 'unused') as d from pg_sequences where schemaname = $1`),
    migrations: (await client.query<{ d: string }>(`select name as d from ${schema}.kysely_migration order by name`)).rows.map((r) => r.d),
  };
}

/**
 * The PostgreSQL test apps run on a copy of a schema migrated once per run (tests/helpers/pg-template.ts),
 * not on one migrated for them: the copy must be the migrated schema, or every PostgreSQL test
 * would check a database production never has.
 */
describe.skipIf(!url)('a PostgreSQL test app’s schema, copied from the one migrated at the start of the run', () => {
  const client = new pg.Client({ connectionString: url });
  const made: string[] = [];
  afterAll(async () => {
    for (const schema of made) await dropTestSchema(url, schema);
    await client.end();
  });

  it('has every table, column, constraint, index, trigger, function and recorded migration a migrated schema has', async () => {
    await client.connect();
    const migrated = `m_${crypto.randomBytes(6).toString('hex')}`;
    const copied = `c_${crypto.randomBytes(6).toString('hex')}`;
    made.push(migrated, copied);
    await migrateSchema(client, url, migrated);
    expect(await copyMigratedSchema(url, copied)).toBe(true);

    const want = await catalog(client, migrated);
    expect(want.migrations.length).toBeGreaterThan(0);
    expect(want.triggers.length).toBeGreaterThan(0);
    expect(await catalog(client, copied)).toEqual(want);
  });
});
