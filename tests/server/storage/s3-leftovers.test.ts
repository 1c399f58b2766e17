import { AbortMultipartUploadCommand, CreateMultipartUploadCommand, ListMultipartUploadsCommand, UploadPartCopyCommand } from '@aws-sdk/client-s3';
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { S3Storage } from '../../../server/storage/s3.ts';
import { StorageError } from '../../../server/storage/storage.ts';
import { S3_AVAILABLE, createTestBucket, s3Endpoint, s3Settings, stopS3Server, warnS3Skipped } from '../../helpers/s3-server.ts';
import { startTcpProxy } from '../../helpers/tcp-proxy.ts';
import { openDriver, pattern, readAll, source } from './drivers.ts';

/**
 * What the S3 driver leaves behind when the store misbehaves: a multipart upload left open by a
 * finalize that did not run to its end (billed for its parts until someone aborts it; README
 * "Deployment at scale" promises no lifecycle rule is needed), and a read the server itself
 * consumes whole, held by a store gone silent midway.
 */
warnS3Skipped();
afterAll(stopS3Server);

const MiB = 1024 * 1024;
const KEY = 's3-leftovers-key-01';

/** Reads on to the end: a store that fails midway must fail the read as a 503 with retry (Storage contract). */
async function expectStoreFailure(reading: AsyncIterator<unknown>): Promise<void> {
  let outcome: unknown = 'ended';
  try {
    while (!(await reading.next()).done);
  } catch (err) {
    outcome = err;
  }
  expect(outcome).toBeInstanceOf(StorageError);
  expect((outcome as StorageError).statusCode).toBe(503);
}

describe.skipIf(!S3_AVAILABLE)('S3 driver leftovers', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });
  const open = async (chunkSize: number) => {
    const h = await openDriver('s3', { chunkSize });
    closers.push(h.close);
    return h as typeof h & { s3: S3Storage; bucket: string };
  };
  const openUploads = async (s3: S3Storage, bucket: string) => (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];

  it('a finalize that failed midway and could not abort its upload leaves nothing open once a retry completes the file', async () => {
    const { s3, bucket } = await open(16 * MiB);
    const file = pattern(16 * MiB);
    await s3.writeAt(KEY, 0, source(file));
    // The store fails a part copy and then the abort too (a SlowDown burst; or the process dies
    // before it can abort): the multipart upload this attempt created stays open.
    const send = s3.client.send.bind(s3.client) as (command: unknown, options?: unknown) => Promise<unknown>;
    let failing = true;
    s3.client.send = (async (command: unknown, options?: unknown) => {
      if (failing && (command instanceof UploadPartCopyCommand || command instanceof AbortMultipartUploadCommand)) {
        throw Object.assign(new Error('Please reduce your request rate.'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } });
      }
      return send(command, options);
    }) as typeof s3.client.send;
    expect(await s3.finalize(KEY, file.length).catch((e: unknown) => (e as Error).name)).toBe('StorageError');
    expect(await openUploads(s3, bucket)).toHaveLength(1);
    // The client retries (the 503 said so); this time the store answers.
    failing = false;
    await s3.finalize(KEY, file.length);
    expect((await readAll(s3.read(KEY))).equals(file)).toBe(true);
    // The file is listed now: no cancel or expiry will ever call discard for it.
    expect(await openUploads(s3, bucket)).toEqual([]);
  });

  it('discard is done when another process aborted the same open upload first (a cancel racing a finalize’s clean-up)', async () => {
    const { s3, bucket } = await open(16 * MiB);
    await s3.writeAt(KEY, 0, source(pattern(MiB)));
    await s3.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: `files/${KEY}` }));
    // Between this process's listing and its abort, another one aborts the same upload.
    const send = s3.client.send.bind(s3.client) as (command: unknown, options?: unknown) => Promise<unknown>;
    s3.client.send = (async (command: unknown, options?: unknown) => {
      if (command instanceof AbortMultipartUploadCommand) await send(new AbortMultipartUploadCommand(command.input));
      return send(command, options);
    }) as typeof s3.client.send;
    await expect(s3.discard(KEY)).resolves.toBeUndefined();
    expect(await openUploads(s3, bucket)).toEqual([]);
  });

  it('a read the server consumes itself, cut off by the store midway, is a 503 with retry and not an unknown error', { timeout: 30_000 }, async () => {
    const endpoint = await s3Endpoint();
    const b = await createTestBucket(endpoint);
    const proxy = await startTcpProxy(Number(new URL(endpoint).port));
    const s3 = new S3Storage(s3Settings(proxy.url, b.bucket), { chunkSize: 32 * MiB, silenceMs: 2000, log: () => {} });
    closers.push(async () => {
      s3.client.destroy();
      await proxy.close();
      await b.drop();
    });
    // Larger than what the sockets along the way hold, so most of it is still at the store.
    const file = pattern(24 * MiB);
    await s3.writeAt(KEY, 0, source(file));
    await s3.finalize(KEY, file.length);
    // As the files host's small-file path, a preview or a re-hash read: every byte is asked for at once.
    const reading = s3.read(KEY)[Symbol.asyncIterator]();
    await reading.next();
    proxy.silence(true);
    await expectStoreFailure(reading);
  });

  it('an unfinished chunk read back (a resumed chunk re-hashed), cut off by the store midway, is a 503 with retry', { timeout: 30_000 }, async () => {
    const endpoint = await s3Endpoint();
    const b = await createTestBucket(endpoint);
    const proxy = await startTcpProxy(Number(new URL(endpoint).port));
    const s3 = new S3Storage(s3Settings(proxy.url, b.bucket), { chunkSize: 32 * MiB, silenceMs: 2000, log: () => {} });
    closers.push(async () => {
      s3.client.destroy();
      await proxy.close();
      await b.drop();
    });
    await s3.writeAt(KEY, 0, source(pattern(24 * MiB)));
    const reading = s3.readUnfinished(KEY, 0, 24 * MiB)[Symbol.asyncIterator]();
    await reading.next();
    proxy.silence(true);
    await expectStoreFailure(reading);
  });

  it('a read the server consumes itself fails as a 503 when the store hangs midway, instead of waiting for ever', { timeout: 30_000 }, async () => {
    const endpoint = await s3Endpoint();
    const b = await createTestBucket(endpoint);
    const relay = await freezingRelay(Number(new URL(endpoint).port));
    const s3 = new S3Storage(s3Settings(relay.url, b.bucket), { chunkSize: 32 * MiB, silenceMs: 2000, log: () => {} });
    closers.push(async () => {
      s3.client.destroy();
      await relay.close();
      await b.drop();
    });
    const file = pattern(24 * MiB);
    await s3.writeAt(KEY, 0, source(file));
    await s3.finalize(KEY, file.length);
    const reading = s3.read(KEY)[Symbol.asyncIterator]();
    await reading.next();
    // The store stops sending but keeps the connection open (a hung server, a dropped flow).
    relay.freeze();
    await expectStoreFailure(reading);
  });
});

/** A loopback relay to the store that, once frozen, passes nothing on either way and closes nothing. */
async function freezingRelay(targetPort: number): Promise<{ url: string; freeze(): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const pass = (from: net.Socket, to: net.Socket) =>
      from.on('data', (data: Buffer) => {
        if (frozen) return void from.pause();
        if (!to.write(data)) {
          from.pause();
          to.once('drain', () => {
            if (!frozen) from.resume();
          });
        }
      });
    pass(client, upstream);
    pass(upstream, client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    freeze: () => {
      frozen = true;
      for (const s of sockets) s.pause();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
