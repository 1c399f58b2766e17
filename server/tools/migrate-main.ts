import { openInstance, ToolUsageError, type Instance } from './instance.ts';
import { formatBytes, runMigration } from './migrate.ts';
import { Progress } from './progress.ts';

/** `npm run migrate`: see migrate.ts. Exit 0 done, 1 a file did not verify, 2 a variable to fix. */
async function main(): Promise<number> {
  let source: Instance | null = null;
  let target: Instance | null = null;
  try {
    source = await openInstance(process.env, '');
    target = await openInstance(process.env, 'TARGET_');
    const summary = await runMigration(source, target, new Progress(process.stderr));
    const records = Object.entries(summary.records).map(([t, n]) => `${t} ${n}`).join(', ');
    console.log(`Migration finished.\n  records: ${records}`);
    console.log(`  files: ${summary.files.total} (${summary.files.copied} copied, ${summary.files.alreadyThere} already there, ${summary.files.removed} removed from the target)`);
    console.log(`  bytes copied: ${summary.bytes} (${formatBytes(summary.bytes)})`);
    console.log(`  mismatches: ${summary.mismatches.length}${summary.mismatches.length ? ` (${summary.mismatches.join(', ')})` : ''}`);
    if (summary.unknownTables.length) console.log(`  not copied (unknown to this tool): ${summary.unknownTables.join(', ')}`);
    return summary.mismatches.length ? 1 : 0;
  } catch (err) {
    if (err instanceof ToolUsageError) {
      console.error(`migrate: ${err.message}`);
      return 2;
    }
    throw err;
  } finally {
    await target?.close();
    await source?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('migrate failed:', err);
    process.exit(1);
  },
);
