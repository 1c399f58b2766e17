import { afterEach, describe, expect, it } from 'vitest';
import { DirectUploader } from '../../src/upload/page/direct-uploader.ts';
import { ApiError } from '../../src/lib/api-client.ts';
import { setRuntimeConfig } from '../../src/lib/runtime-config.ts';
import type { UploadItem } from '../../src/upload/uploader.ts';

afterEach(() => {
  localStorage.clear();
  setRuntimeConfig({});
});

function waitFor(uploader: DirectUploader, done: (items: UploadItem[]) => boolean): Promise<UploadItem[]> {
  return new Promise((resolve) => {
    const off = uploader.subscribe((items) => {
      if (done(items)) {
        queueMicrotask(() => off());
        resolve(items);
      }
    });
  });
}

describe('DirectUploader (design §7 chunk protocol)', () => {
  it('sends numbered chunks with the text fields before the file part and ends with the link', async () => {
    setRuntimeConfig({ chunkSize: 4 });
    localStorage.setItem('token', 'tok');
    const sent: { fields: string[]; values: Record<string, string>; size: number }[] = [];
    const uploader = new DirectUploader(async (form) => {
      const fields = [...form.keys()];
      const values = Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string')) as Record<string, string>;
      sent.push({ fields, values, size: (form.get('file') as Blob).size });
      const last = Number(values.chunkIndex) === Number(values.totalChunks) - 1;
      return last
        ? ({ success: true, url: 'http://files.test/abc.txt', file: {} } as never)
        : { success: true, received: [Number(values.chunkIndex)], totalChunks: Number(values.totalChunks) };
    });
    const finished = waitFor(uploader, (items) => items[0]?.state === 'done');
    await uploader.enqueue([new File(['0123456789'], 'ten.txt', { type: 'text/plain' })]);
    const [item] = await finished;
    expect(sent.map((s) => [s.values.chunkIndex, s.size])).toEqual([
      ['0', 4],
      ['1', 4],
      ['2', 2],
    ]);
    expect(sent[0]!.fields.at(-1)).toBe('file');
    expect(sent[0]!.values).toMatchObject({ totalChunks: '3', originalname: 'ten.txt', fileSize: '10', token: 'tok' });
    expect(sent[0]!.values.uploadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(item).toMatchObject({ state: 'done', ackedBytes: 10, url: 'http://files.test/abc.txt', persistent: false });
  });

  it("fails with the server's message, or 'Error uploading file' when there is none", async () => {
    setRuntimeConfig({ chunkSize: 100 });
    const refusing = new DirectUploader(async () => {
      throw new ApiError('File type not allowed', { status: 415, fromServer: true, success: false });
    });
    const a = waitFor(refusing, (items) => items[0]?.state === 'failed');
    await refusing.enqueue([new File(['x'], 'x.exe')]);
    expect((await a)[0]!.error).toBe('File type not allowed');

    const silent = new DirectUploader(async () => {
      throw new ApiError('Request failed with status code 400', { status: 400, fromServer: false });
    });
    const b = waitFor(silent, (items) => items[0]?.state === 'failed');
    await silent.enqueue([new File(['x'], 'y.bin')]);
    expect((await b)[0]!.error).toBe('Error uploading file');
  });
});
