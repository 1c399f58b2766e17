import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/upload/queue/backoff.ts';
import { classifyAnswer, parseRetryAfter } from '../../src/upload/queue/classify.ts';
import { acknowledgedBytes, planResume } from '../../src/upload/queue/resume-plan.ts';
import { sendUpload } from '../../src/upload/queue/sender.ts';
import type { ChunkSource } from '../../src/upload/queue/chunk-source.ts';
import type { Transport } from '../../src/upload/queue/transport.ts';
import type { UploadRecord } from '../../src/upload/store/schema.ts';

const answer = (status: number, body: unknown, retryAfter: string | null = null) => ({ status, body, retryAfter });

describe('retry rules (issue 5)', () => {
  it('backs off exponentially with jitter, capped', () => {
    const opts = { baseMs: 1000, maxMs: 8000 };
    expect(backoffDelay(0, opts, () => 0)).toBe(500);
    expect(backoffDelay(0, opts, () => 1)).toBe(1000);
    expect(backoffDelay(2, opts, () => 0)).toBe(2000);
    expect(backoffDelay(2, opts, () => 1)).toBe(4000);
    expect(backoffDelay(10, opts, () => 1)).toBe(8000);
    expect(backoffDelay(10, opts, () => 0)).toBe(4000);
  });

  it('retries 408, 409, 423, 429 and 5xx, stops on other 4xx with the server message', () => {
    for (const status of [408, 409, 423, 429, 500, 502, 503]) expect(classifyAnswer(answer(status, { success: false, error: 'x' })).kind).toBe('retry');
    expect(classifyAnswer(answer(413, { success: false, error: 'The file is too large.' }))).toEqual({ kind: 'fatal', message: 'The file is too large.' });
    expect(classifyAnswer(answer(401, { success: false, error: { error: 'Bad token' } }))).toEqual({ kind: 'fatal', message: 'Bad token' });
    expect(classifyAnswer(answer(400, 'not json'))).toEqual({ kind: 'fatal', message: 'Error uploading file' });
  });

  it('retries a 422 only when the server marks it retryable (checksum mismatch)', () => {
    expect(classifyAnswer(answer(422, { success: false, error: 'Chunk checksum mismatch', retry: true }))).toMatchObject({ kind: 'retry', checksum: true });
    expect(classifyAnswer(answer(422, { success: false, error: 'Unprocessable' }))).toEqual({ kind: 'fatal', message: 'Unprocessable' });
  });

  it('honours Retry-After in seconds or as a date on 429', () => {
    expect(classifyAnswer(answer(429, { success: false, error: 'slow down' }, '7'))).toMatchObject({ kind: 'retry', retryAfterMs: 7000 });
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('plans a resume that skips stored chunks and finishes a cut one from its offset', () => {
    // 3 chunks of 100 bytes, last 50: chunk 0 stored, 30 bytes of chunk 1 kept.
    const progress = { received: [0], partial: { chunkIndex: 1, bytes: 30 } };
    expect(planResume(3, 250, 100, progress)).toEqual([
      { index: 1, offset: 30 },
      { index: 2, offset: 0 },
    ]);
    expect(acknowledgedBytes(3, 250, 100, progress)).toBe(130);
    expect(planResume(3, 250, 100, { received: [0, 1, 2], partial: null })).toEqual([]);
    // Every byte of chunk 1 kept, its request cut before its end: only the end is sent.
    expect(planResume(3, 250, 100, { received: [0], partial: { chunkIndex: 1, bytes: 100 } })[0]).toEqual({ index: 1, offset: 100 });
  });
});

describe('a finish cut short (design §7, finish-upload.ts)', () => {
  function job(answers: { url?: string }[]) {
    const released: number[] = [];
    const sent: string[] = [];
    let progressed = 0;
    const record = { id: 'u1', name: 'a.txt', size: 250, chunkSize: 100, totalChunks: 3, state: 'uploading' } as UploadRecord;
    const source: ChunkSource = {
      read: async (index) => ({ data: new Blob([new Uint8Array(index === 2 ? 50 : 100)]), hash: `h${index}` }),
      release: async (index) => void released.push(index),
    };
    const transport: Transport = {
      // status: every chunk received, no link.
      postJson: async () => ({ status: 200, body: { success: true, totalChunks: 3, received: [0, 1, 2], partial: null }, retryAfter: null }),
      postMultipart: async (req) => {
        sent.push(Object.fromEntries(req.fields).chunkIndex!);
        const url = answers.shift()?.url;
        return { status: 200, body: url ? { success: true, url, file: {} } : { success: true, received: [0, 1, 2], totalChunks: 3 }, retryAfter: null };
      },
    };
    const send = sendUpload({
      transport,
      apiUrl: 'http://api.test',
      token: 'tok',
      record,
      source,
      signal: new AbortController().signal,
      current: async () => record,
      acknowledged: async () => undefined,
      onSent: () => undefined,
      onProgress: () => void (progressed += 1),
    });
    return { send, released, sent, progressed: () => progressed };
  }

  it('sends the last chunk again in full, and keeps its copy until a link arrives', async () => {
    const finished = job([{ url: 'http://files.test/x.txt' }]);
    await finished.send;
    expect(finished.sent).toEqual(['2']);
    expect(finished.released).toEqual([0, 1, 2]);

    // Another request is still listing the file: no link, nothing released, and no progress (backoff grows).
    const listing = job([{}]);
    await expect(listing.send).rejects.toThrow('Waiting for the server to finish the file');
    expect(listing.sent).toEqual(['2']);
    expect(listing.released).toEqual([0, 1]);
    expect(listing.progressed()).toBe(0);
  });
});
