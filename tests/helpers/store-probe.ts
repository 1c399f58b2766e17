import fs from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/**
 * What a test app's store holds, whichever driver it runs on (TEST_STORAGE=s3 runs the upload
 * and files tests on S3): bytes of unfinished uploads and the keys of stored files.
 */
export interface StoreProbe {
  driver: 'local' | 's3';
  partialBytes(): Promise<number>;
  storedKeys(): Promise<string[]>;
}

export function localProbe(dataDir: string): StoreProbe {
  const walk = (dir: string): { size: number; name: string }[] =>
    fs.existsSync(dir)
      ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [{ name: e.name, size: fs.statSync(path.join(dir, e.name)).size }]))
      : [];
  return {
    driver: 'local',
    partialBytes: () => Promise.resolve(walk(path.join(dataDir, 'storage', 'partial')).reduce((sum, f) => sum + f.size, 0)),
    storedKeys: () => Promise.resolve(walk(path.join(dataDir, 'storage', 'files')).map((f) => f.name)),
  };
}

export function s3Probe(client: S3Client, bucket: string): StoreProbe {
  const list = async (prefix: string) => {
    const found: { key: string; size: number }[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key) found.push({ key: o.Key, size: o.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  };
  return {
    driver: 's3',
    partialBytes: async () => (await list('tmp/')).reduce((sum, o) => sum + o.size, 0),
    storedKeys: async () => (await list('files/')).map((o) => o.key.slice('files/'.length)),
  };
}
