/** What the queue needs from HTTP, injectable so Node tests can drive a real server (issue 5). */
export interface HttpAnswer {
  status: number;
  body: unknown;
  /** The Retry-After header, raw (seconds or an HTTP date). */
  retryAfter: string | null;
}

export interface MultipartRequest {
  url: string;
  /** Text fields, sent in this order and before the file part (design §7). */
  fields: [string, string][];
  fileField: string;
  file: Blob;
  filename: string;
  signal: AbortSignal;
  /** Bytes of this request's body sent so far (where the transport can tell). */
  onProgress?: (sent: number) => void;
}

export interface Transport {
  /** Resolves with any HTTP answer; rejects only when no answer arrived (network, abort). */
  postMultipart(request: MultipartRequest): Promise<HttpAnswer>;
  postJson(url: string, body: unknown, signal: AbortSignal): Promise<HttpAnswer>;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function formOf(request: MultipartRequest): FormData {
  const form = new FormData();
  for (const [name, value] of request.fields) form.append(name, value);
  form.append(request.fileField, request.file, request.filename);
  return form;
}

/** fetch-based: works in Node (tests), workers and service workers; no upload progress. */
export const fetchTransport: Transport = {
  async postMultipart(request) {
    const res = await fetch(request.url, { method: 'POST', body: formOf(request), signal: request.signal });
    return { status: res.status, body: await readBody(res), retryAfter: res.headers.get('retry-after') };
  },
  async postJson(url, body, signal) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
    return { status: res.status, body: await readBody(res), retryAfter: res.headers.get('retry-after') };
  },
};

/**
 * How long a chunk's body may go without a byte leaving before its request is given up as a
 * dead connection, to be resumed through files/upload/status like any cut request. A phone
 * moving between networks can keep a connection that neither errors nor moves, which the kernel
 * gives up on only once its retransmissions run out (some 15 minutes on Linux and Android): the
 * row sat at the same percentage all that time. 30 s, as tus-js-client's stall detection and
 * Uppy's XHR upload use. Once the body is out the answer is not timed: the server may be
 * finishing the file, and status waits for it (design §7).
 */
export const STALLED_AFTER_MS = 30_000;

export interface XhrOptions {
  stalledAfterMs?: number;
  /** The XMLHttpRequest to use; the context's own by default. */
  Xhr?: typeof XMLHttpRequest;
}

/**
 * XMLHttpRequest exists in dedicated workers and, unlike fetch, reports upload progress,
 * which the queue shows while a chunk is on its way, and by which a stalled body is told.
 */
export function xhrTransportWith(options: XhrOptions = {}): Transport {
  const stalledAfterMs = options.stalledAfterMs ?? STALLED_AFTER_MS;
  return {
    postMultipart(request) {
      return new Promise<HttpAnswer>((resolve, reject) => {
        const xhr = new (options.Xhr ?? XMLHttpRequest)();
        let stall: ReturnType<typeof setTimeout> | undefined;
        let stalled = false;
        const watch = () => {
          clearTimeout(stall);
          stall = setTimeout(() => {
            stalled = true;
            xhr.abort();
          }, stalledAfterMs);
        };
        xhr.open('POST', request.url);
        xhr.responseType = 'text';
        xhr.upload.onprogress = (event) => {
          watch();
          request.onProgress?.(event.loaded);
        };
        xhr.upload.onload = () => clearTimeout(stall);
        xhr.onloadend = () => clearTimeout(stall);
        xhr.onload = () => {
          let body: unknown = xhr.responseText;
          try {
            body = JSON.parse(xhr.responseText) as unknown;
          } catch {
            // a non-JSON answer (a proxy's error page) is kept as text
          }
          resolve({ status: xhr.status, body, retryAfter: xhr.getResponseHeader('retry-after') });
        };
        xhr.onerror = () => reject(new TypeError('Network error'));
        xhr.ontimeout = () => reject(new TypeError('Network timeout'));
        // A stalled body is a network error (retried, resumed); the caller's own abort is not.
        xhr.onabort = () => reject(stalled ? new TypeError('The connection stalled') : new DOMException('Aborted', 'AbortError'));
        if (request.signal.aborted) {
          reject(new DOMException('Aborted', 'AbortError'));
          return;
        }
        request.signal.addEventListener('abort', () => xhr.abort(), { once: true });
        watch();
        xhr.send(formOf(request));
      });
    },
    postJson: fetchTransport.postJson,
  };
}

export const xhrTransport: Transport = xhrTransportWith();
