import type { UploadChunkResponse, UploadDoneResponse } from '../../../contract/files.ts';
import { ApiError } from '../../../src/lib/api-client.ts';
import type { DirectUploader } from '../../../src/upload/page/direct-uploader.ts';
import type { HttpAnswer, Transport } from '../../../src/upload/queue/transport.ts';

type Send = NonNullable<ConstructorParameters<typeof DirectUploader>[0]>;

interface Upload {
  totalChunks: number;
  received: Set<number>;
  phase: 'open' | 'finishing' | 'listed' | 'deleted';
  url?: string;
}

interface Gate {
  reached: boolean;
  open: Promise<void>;
  release: () => void;
}

function gate(): Gate {
  let release = () => {};
  const open = new Promise<void>((resolve) => (release = resolve));
  return { reached: false, open, release };
}

const answer = (status: number, body: unknown): HttpAnswer => ({ status, body, retryAfter: null });
const aborted = () => new ApiError('canceled', { status: 0, code: 'ERR_CANCELED', fromServer: false });

/**
 * The server's side of design §7 as the page's uploader meets it, for the web project: jsdom
 * cannot host the real server, which tests/workers/finish-and-cancel.test.ts drives through the
 * worker queue. It answers as server/modules/files/upload.service.ts does where a cancel races
 * the finish: a cancel of an upload being finished is 409 and of a listed one 404; status says
 * progress while finishing, the link once listed, 410 once its file is deleted; the last chunk
 * sent again meanwhile is answered with progress. The request whose chunk completed the upload
 * waits for the finish, and aborting it (as axios does) leaves the finish running.
 */
export class UploadServerStandIn {
  readonly uploads = new Map<string, Upload>();
  /** The JSON calls, with the status each was answered. */
  readonly calls: { path: string; status: number }[] = [];
  /** Chunk requests as they arrived, by upload and chunk index. */
  readonly chunks: { uploadId: string; chunkIndex: number }[] = [];
  /** files/delete answers this instead of deleting (deleting switched off, say). */
  refuseDelete: HttpAnswer | null = null;
  private finishGate: Gate | null = null;
  private readonly stalls = new Map<number, Gate>();
  private readonly cancelled = new Set<string>();
  private listedCount = 0;

  /** Finishes wait here until released: every byte is in, the file not listed yet (holdFinalize). */
  holdFinish(): { reached: () => boolean; release: () => void } {
    const g = gate();
    this.finishGate = g;
    return { reached: () => g.reached, release: g.release };
  }

  /** The next request for chunk `index` stays on its way until released; aborted meanwhile, it never arrives. */
  stallChunk(index: number): { reached: () => boolean; release: () => void } {
    const g = gate();
    this.stalls.set(index, g);
    return { reached: () => g.reached, release: g.release };
  }

  calledWith(path: string): { path: string; status: number }[] {
    return this.calls.filter((c) => c.path === `/api/v1/${path}`);
  }

  /** The files listed now (deleted ones not). */
  listedUrls(): string[] {
    return [...this.uploads.values()].filter((u) => u.phase === 'listed').map((u) => u.url!);
  }

  readonly send: Send = (form, _onProgress, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(aborted());
      signal.addEventListener('abort', () => reject(aborted()), { once: true });
      if (form.get('token') !== 'tok') return reject(new ApiError('Sign in again', { status: 401, fromServer: true, success: false }));
      const uploadId = String(form.get('uploadId'));
      const chunkIndex = Number(form.get('chunkIndex'));
      const stall = this.stalls.get(chunkIndex);
      this.stalls.delete(chunkIndex);
      if (stall) stall.reached = true;
      void (stall?.open ?? Promise.resolve())
        .then(() => (signal.aborted ? undefined : this.receive(uploadId, chunkIndex, Number(form.get('totalChunks')))))
        .then((res) => res && resolve(res), reject);
    });

  readonly transport: Transport = {
    postMultipart: () => Promise.reject(new Error('the page sends chunks through its own send')),
    postJson: async (url, body) => {
      const path = new URL(url, 'http://api.test').pathname;
      const res = this.answerJson(path, body as Record<string, unknown>);
      this.calls.push({ path, status: res.status });
      return res;
    },
  };

  private async receive(uploadId: string, chunkIndex: number, totalChunks: number): Promise<UploadChunkResponse | UploadDoneResponse> {
    this.chunks.push({ uploadId, chunkIndex });
    const upload = this.uploads.get(uploadId);
    if (upload?.phase === 'listed') return this.done(upload);
    if (upload?.phase === 'deleted') throw new ApiError('This upload was finished, and its file has since been deleted.', { status: 410, fromServer: true, success: false });
    if (this.cancelled.has(uploadId)) throw new ApiError('This upload was cancelled or has expired; start it again.', { status: 410, fromServer: true, success: false });
    const u = upload ?? { totalChunks, received: new Set<number>(), phase: 'open' as const };
    this.uploads.set(uploadId, u);
    u.received.add(chunkIndex);
    // Being finished by another request, or not whole yet: progress.
    if (u.phase === 'finishing' || u.received.size < u.totalChunks) return this.progress(u);
    u.phase = 'finishing';
    if (this.finishGate) {
      this.finishGate.reached = true;
      await this.finishGate.open;
    }
    this.listedCount += 1;
    u.url = `http://files.test/file${this.listedCount}.txt`;
    u.phase = 'listed';
    return this.done(u);
  }

  private answerJson(path: string, body: Record<string, unknown>): HttpAnswer {
    if (body.token !== 'tok') return answer(401, { success: false, error: 'Sign in again' });
    const upload = typeof body.uploadId === 'string' ? this.uploads.get(body.uploadId) : undefined;
    switch (path) {
      case '/api/v1/files/upload/cancel':
        this.cancelled.add(String(body.uploadId));
        if (!upload || upload.phase === 'listed' || upload.phase === 'deleted') return answer(404, { success: false, error: 'No unfinished upload with this uploadId.' });
        if (upload.phase === 'finishing') return answer(409, { success: false, error: 'This upload is being finished and can no longer be cancelled.' });
        this.uploads.delete(String(body.uploadId));
        return answer(200, { success: true });
      case '/api/v1/files/upload/status':
        if (!upload) return answer(404, { success: false, error: 'No unfinished upload with this uploadId.' });
        if (upload.phase === 'deleted') return answer(410, { success: false, error: 'This upload was finished, and its file has since been deleted.' });
        return answer(200, { ...this.progress(upload), partial: null, ...(upload.phase === 'listed' ? { url: upload.url } : {}) });
      case '/api/v1/files/delete': {
        if (this.refuseDelete) return this.refuseDelete;
        const file = [...this.uploads.values()].find((u) => u.phase === 'listed' && u.url === body.filePath);
        if (!file) return answer(404, { success: false, error: 'File not found' });
        file.phase = 'deleted';
        return answer(200, { success: true });
      }
      default:
        return answer(404, { success: false, error: `No route ${path}` });
    }
  }

  private progress(u: Upload): UploadChunkResponse {
    return { success: true, received: [...u.received].sort((a, b) => a - b), totalChunks: u.totalChunks };
  }

  private done(u: Upload): UploadDoneResponse {
    return { success: true, url: u.url!, file: {} as UploadDoneResponse['file'] };
  }
}
