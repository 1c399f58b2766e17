import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { LocalStorage } from '../../../server/storage/local.ts';
import { randomBytes } from '../../helpers/upload.ts';

const MiB = 1024 * 1024;
let root = '';
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/**
 * Issue 8 item 3: after a kill -9 midway through a chunk, status reports the bytes on disk. The
 * writer here is still alive but stalled, as a killed one would be: another instance on the same
 * directory (a restarted process) must see its durable bytes without the write ever ending.
 */
it('reports a stalled write’s durable bytes from the store to another process, then the whole chunk', async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-progress-'));
  const writer = new LocalStorage(root);
  const data = randomBytes(3 * MiB);
  let resume!: () => void;
  const stalled = new Promise<void>((r) => (resume = r));
  const source = Readable.from(
    (async function* () {
      for (let o = 0; o < data.length; o += 256 * 1024) yield data.subarray(o, o + 256 * 1024);
      await stalled;
    })(),
  );
  const write = writer.writeAt('progress-key-1', 5 * MiB, source);

  const restarted = new LocalStorage(root);
  const deadline = Date.now() + 10_000;
  let seen = 0;
  while (seen < data.length && Date.now() < deadline) {
    seen = await restarted.storedBytes('progress-key-1', 5 * MiB, 10 * MiB);
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(seen).toBe(data.length);
  // Nothing is claimed for the chunk before it, and the bytes read back are the ones written.
  expect(await restarted.storedBytes('progress-key-1', 0, 5 * MiB)).toBe(0);
  const back: Buffer[] = [];
  for await (const piece of restarted.readUnfinished('progress-key-1', 5 * MiB, 8 * MiB)) back.push(piece as Buffer);
  expect(Buffer.concat(back).equals(data)).toBe(true);

  resume();
  expect(await write).toBe(data.length);
  await restarted.resetRange('progress-key-1', 5 * MiB, 10 * MiB);
  expect(await writer.storedBytes('progress-key-1', 5 * MiB, 10 * MiB)).toBe(0);
  await writer.discard('progress-key-1');
  expect(fs.readdirSync(path.join(root, 'progress'))).toEqual([]);
});
