import path from 'node:path';
import { openBackup, restoreComplete } from './backup.ts';
import { openInstance } from './instance.ts';
import { runMigration } from './migrate.ts';
import { Progress } from './progress.ts';
import { runTool } from './run-tool.ts';

/**
 * `npm run restore -- <dir>`: copies a backup into the (empty) instance the environment
 * describes, verifying every file by SHA-256. Exit 0 done, 1 a file did not verify, 2 a
 * variable or argument to fix.
 */
runTool('restore', async (opened) => {
  const dir = process.argv[2];
  if (!dir) {
    console.error('restore: give the backup directory, e.g. npm run restore -- /var/backups/stash-2026-11-22');
    return 2;
  }
  const source = openBackup(path.resolve(dir));
  opened.push(source);
  const target = await openInstance(process.env, '');
  opened.push(target);
  const summary = await runMigration(source, target, new Progress(process.stderr));
  console.log(`Restored ${summary.records.files} files (${summary.bytes} bytes) and ${Object.values(summary.records).reduce((a, b) => a + b, 0)} records.`);
  console.log(`  mismatches: ${summary.mismatches.length}${summary.mismatches.length ? ` (${summary.mismatches.join(', ')})` : ''}`);
  return restoreComplete(summary, source.manifest) ? 0 : 1;
});
