import path from 'node:path';
import { backup } from './backup.ts';
import { openInstance } from './instance.ts';
import { formatBytes } from './migrate.ts';
import { Progress } from './progress.ts';
import { runTool } from './run-tool.ts';

/** `npm run backup -- <dir>`: see backup.ts. Exit 0 done, 2 a variable or argument to fix. */
runTool('backup', async (opened) => {
  const dir = process.argv[2];
  if (!dir) {
    console.error('backup: give the directory to write, e.g. npm run backup -- /var/backups/stash-2026-11-22');
    return 2;
  }
  const source = await openInstance(process.env, '');
  opened.push(source);
  const manifest = await backup(source, path.resolve(dir), new Progress(process.stderr));
  const bytes = manifest.files.reduce((sum, f) => sum + f.size, 0);
  console.log(`Backup written to ${path.resolve(dir)}.`);
  console.log(`  files: ${manifest.files.length} (${formatBytes(bytes)}), each verified by SHA-256`);
  if (manifest.vanished.length) console.log(`  deleted while the backup ran (not kept): ${manifest.vanished.join(', ')}`);
  console.log(`  pg_dump: ${manifest.pgDump ? 'database.pgdump' : source.db.dialect === 'postgres' ? 'not installed (stash.db holds every record)' : 'not needed (SQLite)'}`);
  return 0;
});
