import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { xhrTransportWith, type MultipartRequest } from '../../src/upload/queue/transport.ts';

/**
 * The upload worker's transport: a chunk whose body stops moving is given up as a dead
 * connection (the queue then resumes it through files/upload/status), and one that moves, however
 * slowly, is not. jsdom's XMLHttpRequest makes real HTTP requests, but reports upload progress
 * only once the answer comes, so the slow-but-moving case drives the transport with a stand-in
 * XMLHttpRequest whose progress the test sends.
 */
const chunk = (url: string, signal = new AbortController().signal): MultipartRequest => ({
  url,
  fields: [['chunkIndex', '0']],
  fileField: 'file',
  file: new Blob([new Uint8Array(64 * 1024)]),
  filename: 'blob',
  signal,
});

describe('xhrTransport and a connection that stops moving', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  /** A server that takes a chunk's request and then neither reads nor answers it: a dead link. */
  async function deadServer(): Promise<string> {
    server = http.createServer((req, res) => {
      res.setHeader('access-control-allow-origin', '*');
      if (req.method === 'OPTIONS') {
        res.setHeader('access-control-allow-methods', 'POST');
        res.end();
        return;
      }
      req.pause();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/files/upload`;
  }

  it('gives up a chunk whose body stops moving as a network error', async () => {
    const url = await deadServer();
    const sent = xhrTransportWith({ stalledAfterMs: 300 }).postMultipart(chunk(url));
    await expect(sent).rejects.toThrow(new TypeError('The connection stalled'));
  });

  it("reports the caller's own abort as an abort, not as a stall", async () => {
    const url = await deadServer();
    const controller = new AbortController();
    const sent = xhrTransportWith({ stalledAfterMs: 60_000 }).postMultipart(chunk(url, controller.signal));
    controller.abort();
    await expect(sent).rejects.toMatchObject({ name: 'AbortError' });
  });
});

/** Just what the transport uses of an XMLHttpRequest; the test plays the network. */
class StandInXhr {
  static last: StandInXhr | null = null;
  readonly upload: { onprogress: ((e: { loaded: number }) => void) | null; onload: (() => void) | null } = { onprogress: null, onload: null };
  onload: (() => void) | null = null;
  onloadend: (() => void) | null = null;
  onerror: (() => void) | null = null;
  ontimeout: (() => void) | null = null;
  onabort: (() => void) | null = null;
  responseType = '';
  responseText = '';
  status = 0;
  aborted = false;
  constructor() {
    StandInXhr.last = this;
  }
  open(): void {}
  send(): void {}
  getResponseHeader(): string | null {
    return null;
  }
  abort(): void {
    this.aborted = true;
    this.onabort?.();
    this.onloadend?.();
  }
  answer(status: number, body: string): void {
    this.upload.onload?.();
    this.status = status;
    this.responseText = body;
    this.onload?.();
    this.onloadend?.();
  }
}

describe('xhrTransport and a slow connection', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps a chunk whose body moves, however slowly, for longer than the stall bound in all', async () => {
    vi.useFakeTimers();
    const transport = xhrTransportWith({ stalledAfterMs: 300, Xhr: StandInXhr as unknown as typeof XMLHttpRequest });
    const progress: number[] = [];
    const sent = transport.postMultipart({ ...chunk('http://stash.test/api/v1/files/upload'), onProgress: (n) => progress.push(n) });
    const xhr = StandInXhr.last!;
    // A byte every 200 ms for 2 s: never 300 ms without one, though ten bounds go by.
    for (let loaded = 1; loaded <= 10; loaded++) {
      await vi.advanceTimersByTimeAsync(200);
      xhr.upload.onprogress?.({ loaded });
    }
    expect(xhr.aborted).toBe(false);
    // The body is out: the server's answer takes as long as it takes.
    xhr.upload.onload?.();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(xhr.aborted).toBe(false);
    xhr.answer(200, '{"success":true}');
    await expect(sent).resolves.toMatchObject({ status: 200, body: { success: true } });
    expect(progress).toHaveLength(10);
  });

  it('gives up a chunk that moved and then stopped, a stall bound after its last byte', async () => {
    vi.useFakeTimers();
    const transport = xhrTransportWith({ stalledAfterMs: 300, Xhr: StandInXhr as unknown as typeof XMLHttpRequest });
    const sent = transport.postMultipart(chunk('http://stash.test/api/v1/files/upload'));
    const rejected = expect(sent).rejects.toThrow('The connection stalled');
    const xhr = StandInXhr.last!;
    await vi.advanceTimersByTimeAsync(250);
    xhr.upload.onprogress?.({ loaded: 1 });
    await vi.advanceTimersByTimeAsync(299);
    expect(xhr.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(xhr.aborted).toBe(true);
    await rejected;
  });
});
