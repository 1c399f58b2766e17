// `npm start`: build the web app and the server when they are missing or older than their
// sources, then serve every role (design §3) from compiled JavaScript (issue 9: a lean process).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { buildIsStale, buildWebApp } from './web-build.mjs';
import { ensureServerBuilt, serverLaunch } from './server-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (buildIsStale(root)) {
  console.log('Building the web app (it is missing or older than its sources)...');
  const status = buildWebApp(root);
  if (status !== 0) process.exit(status);
}
const entry = await ensureServerBuilt(root, () => console.log('Compiling the server (it is missing or older than its sources)...'));
const launch = serverLaunch(entry, process.env);
const server = spawn(process.execPath, launch.args, { cwd: root, stdio: 'inherit', env: launch.env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));
