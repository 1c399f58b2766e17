import fs from 'node:fs';
import path from 'node:path';

/**
 * What a test app's store holds, whichever driver it runs on (TEST_STORAGE=s3 runs the upload
 * and files tests on S3): bytes of unfinished uploads and the keys of stored files.
 */
export interface StoreProbe {
  driver: 'local' | 's3';
  partialBytes(): Promise<number>;
  /** What holds unfinished uploads: local disk's entries under partial/, S3's piece objects under tmp/. */
  partialKeys(): Promise<string[]>;
  storedKeys(): Promise<string[]>;
  /** Replaces a stored object's bytes behind the server's back (tests of what it keeps in memory). */
  overwriteStored(key: string, bytes: Buffer): Promise<void>;
}

export function localProbe(dataDir: string): StoreProbe {
  const walk = (dir: string): { size: number; name: string }[] =>
    fs.existsSync(dir)
      ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [{ name: e.name, size: fs.statSync(path.join(dir, e.name)).size }]))
      : [];
  const partial = path.join(dataDir, 'storage', 'partial');
  return {
    driver: 'local',
    partialBytes: () => Promise.resolve(walk(partial).reduce((sum, f) => sum + f.size, 0)),
    partialKeys: () => Promise.resolve(fs.existsSync(partial) ? fs.readdirSync(partial) : []),
    storedKeys: () => Promise.resolve(walk(path.join(dataDir, 'storage', 'files')).map((f) => f.name)),
    overwriteStored: (key, bytes) => fs.promises.writeFile(path.join(dataDir, 'storage', 'files', key.slice(0, 2), key), bytes),
  };
}
