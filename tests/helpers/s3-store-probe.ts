import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { StoreProbe } from './store-probe.ts';

/** Apart from store-probe.ts so that a test app on local disk does not load the AWS SDK. */
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
    partialKeys: async () => (await list('tmp/')).map((o) => o.key),
    storedKeys: async () => (await list('files/')).map((o) => o.key.slice('files/'.length)),
    overwriteStored: async (key, bytes) => {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `files/${key}`, Body: bytes, ContentLength: bytes.length }));
    },
  };
}
