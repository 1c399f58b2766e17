import { afterEach, describe, expect, it } from 'vitest';
import { DirectUploader } from '../../src/upload/page/direct-uploader.ts';
import { ApiError } from '../../src/lib/api-client.ts';
import { setRuntimeConfig } from '../../src/lib/runtime-config.ts';
import { CANCELLED_TOO_LATE } from '../../src/upload/queue/records.ts';
import type { UploadItem } from '../../src/upload/uploader.ts';
import { UploadServerStandIn } from './helpers/upload-server-stand-in.ts';

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

/** Polls until `check` holds; fails naming `what` (tests wait for states, never for a fixed time). */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const itemOf = async (uploader: DirectUploader, id: string) => (await uploader.list()).find((i) => i.id === id);

/** 4-byte chunks: a file of 10 bytes is three chunks, one of 3 bytes a single one. */
function startWith(server: UploadServerStandIn): DirectUploader {
  setRuntimeConfig({ chunkSize: 4 });
  localStorage.setItem('token', 'tok');
  return new DirectUploader(server.send, { transport: server.transport, undoMs: 50 });
}

describe('DirectUploader: a cancel racing the finish (issue 11 item 4, "cancel at 99 %")', () => {
  it.each([
    ['three chunks', 10],
    ['a single chunk', 3],
  ])('a cancel that reaches the server while it lists the file (%s) deletes the file, then drops the row', async (_name, size) => {
    const server = new UploadServerStandIn();
    const finish = server.holdFinish();
    const uploader = startWith(server);
    await uploader.enqueue([new File(['x'.repeat(size)], 'private.txt', { type: 'text/plain' })]);
    const [queued] = await uploader.list();
    await until('the server is listing the file', finish.reached); // the bar is at 99 %
    await uploader.cancel(queued!.id);
    expect((await itemOf(uploader, queued!.id))?.state).toBe('cancelled');
    await until('files/upload/cancel was sent', () => server.calledWith('files/upload/cancel').length > 0);
    expect(server.calledWith('files/upload/cancel')[0]!.status).toBe(409);
    finish.release();
    await until('the row is gone', async () => (await uploader.list()).length === 0);
    await until('the file is deleted', () => server.calledWith('files/delete').length > 0);
    expect(server.calledWith('files/delete').map((c) => c.status)).toEqual([200]);
    expect(server.uploads.get(queued!.id)?.phase).toBe('deleted');
    expect(server.listedUrls()).toEqual([]);
  });

  it('a cancel too late whose delete is refused shows the upload done, with its link and why', async () => {
    const server = new UploadServerStandIn();
    server.refuseDelete = { status: 403, body: { success: false, error: 'Deleting files is switched off.' }, retryAfter: null };
    const finish = server.holdFinish();
    const uploader = startWith(server);
    await uploader.enqueue([new File(['0123456789'], 'kept.txt', { type: 'text/plain' })]);
    const [queued] = await uploader.list();
    await until('the server is listing the file', finish.reached);
    await uploader.cancel(queued!.id);
    await until('files/upload/cancel was sent', () => server.calledWith('files/upload/cancel').length > 0);
    finish.release();
    await until('the row shows done', async () => (await itemOf(uploader, queued!.id))?.state === 'done');
    const [url] = server.listedUrls();
    expect(await itemOf(uploader, queued!.id)).toMatchObject({ state: 'done', url, ackedBytes: 10, notice: CANCELLED_TOO_LATE });
    expect(server.calledWith('files/delete').map((c) => c.status)).toEqual([403]);
  });

  it('an undo within the window keeps the upload going: nothing is cancelled on the server', async () => {
    const server = new UploadServerStandIn();
    const stall = server.stallChunk(1);
    const uploader = startWith(server);
    // `witness` waits behind `kept` and is cancelled just after it: once its row is gone, kept's
    // undo window is over too.
    await uploader.enqueue([new File(['0123456789'], 'kept.txt', { type: 'text/plain' }), new File(['w'], 'witness.txt')]);
    const [kept, witness] = await uploader.list();
    await until('chunk 1 is on its way', stall.reached);
    // Together, so the aborted request cannot hand the turn to the witness in between.
    await Promise.all([uploader.cancel(kept!.id), uploader.cancel(witness!.id), uploader.undoCancel(kept!.id)]);
    await until("the witness's window is over", async () => (await itemOf(uploader, witness!.id)) === undefined);
    await until('the upload is done', async () => (await itemOf(uploader, kept!.id))?.state === 'done');
    expect(await itemOf(uploader, kept!.id)).toMatchObject({ state: 'done', url: server.listedUrls()[0], ackedBytes: 10 });
    expect(server.chunks.filter((c) => c.uploadId === kept!.id).map((c) => c.chunkIndex)).toEqual([0, 1, 2]);
    expect(server.calls).toEqual([]);
  });

  it('an undo at 99 %, while the server still lists the file, ends done with its link and nothing deleted', async () => {
    const server = new UploadServerStandIn();
    const finish = server.holdFinish();
    const uploader = startWith(server);
    await uploader.enqueue([new File(['0123456789'], 'kept.txt', { type: 'text/plain' }), new File(['w'], 'witness.txt')]);
    const [kept, witness] = await uploader.list();
    await until('the server is listing the file', finish.reached);
    await Promise.all([uploader.cancel(kept!.id), uploader.cancel(witness!.id), uploader.undoCancel(kept!.id)]);
    // The last chunk is sent again and answered with progress: the first copy is still being listed.
    await until('the last chunk is sent again', () => server.chunks.filter((c) => c.uploadId === kept!.id && c.chunkIndex === 2).length === 2);
    await until("the witness's window is over", async () => (await itemOf(uploader, witness!.id)) === undefined);
    finish.release();
    await until('the upload is no longer uploading', async () => (await itemOf(uploader, kept!.id))?.state !== 'uploading');
    expect(await itemOf(uploader, kept!.id)).toMatchObject({ state: 'done', url: server.listedUrls()[0], ackedBytes: 10 });
    expect(server.calledWith('files/upload/cancel')).toEqual([]);
    expect(server.calledWith('files/delete')).toEqual([]);
  });
});
