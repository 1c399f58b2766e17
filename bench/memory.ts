import { CHUNK_SIZE } from '../contract/files.ts';
import { login, memoryOf, startServer } from './server-process.ts';
import { uploadFile } from './upload-client.ts';
import { mib, type Row } from './stats.ts';

/** Design §10: server memory while 8 large uploads run at once. */
export async function memoryUnderUploads(): Promise<Row[]> {
  const server = await startServer();
  const token = await login(server.apiUrl);
  await new Promise((r) => setTimeout(r, 500));
  const idle = memoryOf(server.pid).rss;
  let peak = idle;
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryOf(server.pid).rss);
  }, 50);
  const size = 3 * CHUNK_SIZE;
  await Promise.all(Array.from({ length: 8 }, (_, i) => uploadFile(server.apiUrl, token, size, 100 + i)));
  clearInterval(sampler);
  peak = Math.max(peak, memoryOf(server.pid).peak);
  await server.stop();
  return [
    {
      benchmark: `server RSS, 8 concurrent uploads of ${mib(size)} (${mib(8 * size)} in all)`,
      stash: `${mib(peak)} peak (+${mib(peak - idle)})`,
      baselineName: 'same server idle',
      baseline: mib(idle),
    },
  ];
}
