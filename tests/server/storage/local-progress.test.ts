import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../../server/storage/local.ts';
import { pattern } from './drivers.ts';

/**
 * Local disk keeps one small checkpoint per write of an unfinished object under
 * `progress/<key>/` (what storedBytes reads after a crash, design §7), and finalize trims the
 * object, moves it into `files/` and drops that folder. What a user would notice if that went
 * wrong: a stored file with bytes past its end, a resume told of bytes that are not there, or
 * folders piling up on the disk.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function store(): { storage: LocalStorage; root: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-progress-'));
  dirs.push(root);
  return { storage: new LocalStorage(root, { directWrites: false }), root };
}

const progressOf = (root: string, key: string) => path.join(root, 'progress', key);

describe('Local disk progress records', () => {
  it('keeps no progress record for bytes that will never be resumed, and stores them as any other', async () => {
    const { storage, root } = store();
    const data = pattern(5000, 3);
    expect(await storage.writeAt('whole-file-1', 0, Readable.from([data]), { resumable: false })).toBe(5000);
    expect(fs.existsSync(progressOf(root, 'whole-file-1'))).toBe(false);
    // Nothing recorded, so a resume would be told of nothing: never of more than is there.
    expect(await storage.storedBytes('whole-file-1', 0, 5000)).toBe(0);
    await storage.finalize('whole-file-1', 5000);
    expect(await buffer(storage.read('whole-file-1'))).toEqual(data);
  });

  it('records a resumable write, and finalize drops the record with every checkpoint in it', async () => {
    const { storage, root } = store();
    await storage.writeAt('chunked-1', 0, Readable.from([pattern(3000, 1)]));
    // A second write resumed from 1000 adds a checkpoint of its own.
    await storage.writeAt('chunked-1', 1000, Readable.from([pattern(3000, 1).subarray(1000)]));
    expect(fs.readdirSync(progressOf(root, 'chunked-1')).sort()).toEqual(['0', '1000']);
    expect(await storage.storedBytes('chunked-1', 0, 3000)).toBe(3000);
    await storage.finalize('chunked-1', 3000);
    expect(fs.existsSync(progressOf(root, 'chunked-1'))).toBe(false);
    expect(fs.readdirSync(path.join(root, 'progress'))).toEqual([]);
  });

  it('trims an object longer than its size (a refused chunk left bytes past a shorter resend)', async () => {
    const { storage } = store();
    await storage.writeAt('trimmed-1', 0, Readable.from([pattern(8000, 5)]));
    await storage.resetRange('trimmed-1', 0, 8000);
    await storage.writeAt('trimmed-1', 0, Readable.from([pattern(6000, 7)]));
    await storage.finalize('trimmed-1', 6000);
    expect(await storage.stat('trimmed-1')).toEqual({ size: 6000 });
    expect(await buffer(storage.read('trimmed-1'))).toEqual(pattern(6000, 7));
  });

  it('finalizes into a folder of files/ made for it, and into one already there', async () => {
    const { storage, root } = store();
    for (const key of ['Zq-first-1', 'Zq-second-2']) {
      await storage.writeAt(key, 0, Readable.from([pattern(100, 2)]), { resumable: false });
      await storage.finalize(key, 100);
    }
    expect(fs.readdirSync(path.join(root, 'files', 'Zq')).sort()).toEqual(['Zq-first-1', 'Zq-second-2']);
    expect(fs.readdirSync(path.join(root, 'partial'))).toEqual([]);
  });

  it('discards an unfinished object with its record, and a key with neither', async () => {
    const { storage, root } = store();
    await storage.writeAt('dropped-1', 0, Readable.from([pattern(100, 4)]));
    await storage.discard('dropped-1');
    await storage.discard('never-written-1');
    expect(fs.readdirSync(path.join(root, 'partial'))).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'progress'))).toEqual([]);
  });
});
