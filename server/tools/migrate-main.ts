import { openInstance } from './instance.ts';
import { formatBytes, runMigration } from './migrate.ts';
import { Progress } from './progress.ts';
import { runTool } from './run-tool.ts';

/** `npm run migrate`: see migrate.ts. Exit 0 done, 1 a file did not verify, 2 a variable to fix. */
runTool('migrate', async (opened) => {
  const source = await openInstance(process.env, '');
  opened.push(source);
  const target = await openInstance(process.env, 'TARGET_');
  opened.push(target);
  const summary = await runMigration(source, target, new Progress(process.stderr));
  const records = Object.entries(summary.records).map(([t, n]) => `${t} ${n}`).join(', ');
  console.log(`Migration finished.\n  records: ${records}`);
  console.log(`  files: ${summary.files.total} (${summary.files.copied} copied, ${summary.files.alreadyThere} already there, ${summary.files.removed} removed from the target)`);
  console.log(`  bytes copied: ${summary.bytes} (${formatBytes(summary.bytes)})`);
  console.log(`  mismatches: ${summary.mismatches.length}${summary.mismatches.length ? ` (${summary.mismatches.join(', ')})` : ''}`);
  if (summary.unknownTables.length) console.log(`  not copied (unknown to this tool): ${summary.unknownTables.join(', ')}`);
  return summary.mismatches.length ? 1 : 0;
});
