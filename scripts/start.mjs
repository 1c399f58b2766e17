// `npm start`: build the web app when it is missing or older than its sources, then serve every
// role (design §3).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { buildIsStale, buildWebApp } from './web-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (buildIsStale(root)) {
  console.log('Building the web app (it is missing or older than its sources)...');
  const status = buildWebApp(root);
  if (status !== 0) process.exit(status);
}
const server = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'server', 'main.ts')], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));
