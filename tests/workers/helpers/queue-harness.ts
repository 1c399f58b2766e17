/// <reference types="node" />
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import 'fake-indexeddb/auto';
import { buildApi } from '../../../server/app.ts';
import { createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';
import type { Dialect } from '../../../server/db/index.ts';
import { UploadStore } from '../../../src/upload/store/upload-store.ts';
import type { UploadItem, ShownState } from '../../../src/upload/uploader.ts';
import { fetchTransport } from '../../../src/upload/queue/transport.ts';
import { UploadQueue, type QueueDeps } from '../../../src/upload/queue/upload-queue.ts';
import type { ChangeChannel, LockManagerLike } from '../../../src/upload/queue/environment.ts';
import { createChannelHub, createLocks, createNetwork } from './fakes.ts';
import { UploadProxy } from './upload-proxy.ts';

/** Small chunks (the server takes a test override) so a 3-chunk upload is kilobytes. */
export const CHUNK = 64 * 1024;

export interface Harness {
  t: TestApp;
  user: TestUser;
  /** Who is signed in on this "browser" (issue 11 item 1); null: nobody. Tabs read it on every call. */
  signedIn: { token: string; owner: string } | null;
  proxy: UploadProxy;
  apiUrl: string;
  /** What files/upload/status says the server holds of the upload's unfinished chunk (null: none). */
  storedPartialBytes(uploadId: string): Promise<number | null>;
  dbName: string;
  /** One browser: tabs share its locks and its broadcast channel. */
  locks: LockManagerLike;
  channel: () => ChangeChannel;
  network: ReturnType<typeof createNetwork>;
  queues: UploadQueue[];
  stores: UploadStore[];
  /** A "tab": a queue over the shared IndexedDB, started. */
  openTab(overrides?: Partial<QueueDeps>): Promise<{ queue: UploadQueue; store: UploadStore }>;
  restartServer(): Promise<void>;
  close(): Promise<void>;
}

export async function createHarness(dialect: Dialect): Promise<Harness> {
  const t = await createTestApp(dialect, {}, { uploadChunkSize: CHUNK });
  await t.api.listen({ port: 0, host: '127.0.0.1' });
  const proxy = new UploadProxy((t.api.server.address() as AddressInfo).port);
  const apiUrl = await proxy.listen();
  const user = await t.createUser();
  const hub = createChannelHub();
  const storedPartialBytes = async (uploadId: string) => {
    const status = await t.call<{ partial?: { chunkIndex: number; bytes: number } | null }>('/api/v1/files/upload/status', { uploadId }, { token: user.token });
    return status.body.partial?.bytes ?? null;
  };
  proxy.settleCut = async (seen) => {
    // Generous: on a loaded CI machine the server may take a while to record a cut chunk.
    await waitUntil(async () => (await storedPartialBytes(seen.fields.uploadId ?? '')) === seen.fileBytes, 10_000).catch(() => undefined);
  };
  const h: Harness = {
    t,
    user,
    signedIn: { token: user.token, owner: user.id },
    proxy,
    apiUrl,
    storedPartialBytes,
    dbName: `stash-uploads-${crypto.randomUUID()}`,
    locks: createLocks(),
    channel: hub,
    network: createNetwork(true),
    queues: [],
    stores: [],
    async openTab(overrides = {}) {
      const store = await UploadStore.open(h.dbName);
      const queue = new UploadQueue({
        store,
        transport: fetchTransport,
        locks: h.locks,
        network: h.network,
        channel: h.channel(),
        auth: async () => ({ apiUrl: h.apiUrl, token: h.signedIn?.token ?? null, owner: h.signedIn?.owner ?? null }),
        chunkSize: CHUNK,
        backoff: { baseMs: 20, maxMs: 200 },
        pollMs: 50,
        ...overrides,
      });
      queue.start();
      h.queues.push(queue);
      h.stores.push(store);
      return { queue, store };
    },
    async restartServer() {
      await t.api.close();
      t.api = await buildApi(t.deps);
      await t.api.listen({ port: 0, host: '127.0.0.1' });
      proxy.targetPort = (t.api.server.address() as AddressInfo).port;
    },
    async close() {
      await Promise.all(h.queues.map((q) => q.close()));
      for (const s of h.stores) s.close();
      await proxy.close();
      await t.close();
    },
  };
  return h;
}

/** Deterministic printable bytes (the server lists them as text/plain, an allowed type). */
export function textFile(size: number, name = 'notes.txt', seed = 1): File {
  const bytes = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    bytes[i] = 97 + (x % 26);
  }
  return new File([bytes], name, { type: 'text/plain' });
}

export async function waitForState(queue: UploadQueue, id: string, states: ShownState[], timeoutMs = 20_000): Promise<UploadItem> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const item = (await queue.list()).find((i) => i.id === id);
    if (item && states.includes(item.state)) return item;
    if (Date.now() > deadline) throw new Error(`upload ${id} never reached ${states.join('/')} (now ${item?.state ?? 'gone'}${item?.error ? `: ${item.error}` : ''})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// 15 s: a state a correct queue reaches in milliseconds took over 10 s once, on a machine running
// two full suites beside this one ("resumes after a reload", waiting for the server to record a
// cut chunk); a test's waits together still fit its 60 s.
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition never became true');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The file as the files host serves it. */
export async function download(t: TestApp, url: string): Promise<Buffer> {
  const res = await t.files.inject({ method: 'GET', url: new URL(url).pathname });
  if (res.statusCode !== 200) throw new Error(`files host answered ${res.statusCode}`);
  return res.rawPayload;
}

export async function bytesOf(file: File): Promise<Buffer> {
  return Buffer.from(await file.arrayBuffer());
}

export function sha256(data: Uint8Array): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}
