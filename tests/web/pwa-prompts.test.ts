import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as Comlink from 'comlink';
import { SHARE_FAILED_MESSAGE, SHARE_NONE_MESSAGE, shareOutcomeMessage, showUpdatePrompt, type UpdateTarget } from '../../src/lib/pwa.ts';
import { newlyFinished } from '../../src/upload/finished-notice.ts';
import { showFinishedNotification, UploadQueueClient } from '../../src/upload/page/queue-client.ts';
import type { UploadItem } from '../../src/upload/uploader.ts';

function item(id: string, state: UploadItem['state'], extra: Partial<UploadItem> = {}): UploadItem {
  return { id, name: `${id}.bin`, size: 10, type: 'application/octet-stream', state, ackedBytes: 0, persistent: true, createdAt: 0, ...extra };
}

describe('the update prompt (issue 5: never reloads while the queue has work)', () => {
  afterEach(() => document.getElementById('pwa-update')?.remove());

  function fakeWorkbox() {
    const listeners: (() => void)[] = [];
    const target: UpdateTarget & { skipped: number; listeners: (() => void)[] } = {
      skipped: 0,
      listeners,
      addEventListener: (_type, listener) => listeners.push(listener),
      messageSkipWaiting() {
        this.skipped += 1;
      },
    };
    return target;
  }

  it('offers the update once, however often the new version is reported', () => {
    const wb = fakeWorkbox();
    showUpdatePrompt(wb, async () => false);
    showUpdatePrompt(wb, async () => false);
    expect(document.querySelectorAll('#pwa-update')).toHaveLength(1);
    expect(document.getElementById('pwa-update')?.textContent).toContain('A new version of Stash is ready.');
  });

  it('waits while uploads run, says so, and activates the new version only once they are done', async () => {
    const wb = fakeWorkbox();
    let busy = true;
    showUpdatePrompt(wb, async () => busy, 10);
    const button = document.querySelector<HTMLButtonElement>('#pwa-update button')!;
    button.click();
    await vi.waitFor(() => expect(document.getElementById('pwa-update')?.textContent).toContain('Uploads are still running'));
    await new Promise((r) => setTimeout(r, 50));
    expect(wb.skipped).toBe(0);
    expect(button.disabled).toBe(true);
    busy = false;
    await vi.waitFor(() => expect(wb.skipped).toBe(1));
    // The reload is tied to the new worker taking control, not to the click.
    expect(wb.listeners).toHaveLength(1);
  });

  it('activates at once when nothing is uploading', async () => {
    const wb = fakeWorkbox();
    showUpdatePrompt(wb, async () => false, 10);
    document.querySelector<HTMLButtonElement>('#pwa-update button')!.click();
    await vi.waitFor(() => expect(wb.skipped).toBe(1));
  });
});

describe('the finished-upload notification (issue 5)', () => {
  const showNotification = vi.fn<(title: string, options: NotificationOptions) => Promise<void>>(async () => undefined);
  let visibility: DocumentVisibilityState = 'hidden';

  beforeEach(() => {
    showNotification.mockClear();
    visibility = 'hidden';
    vi.stubGlobal('Notification', { permission: 'granted' });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => visibility });
    Object.defineProperty(navigator, 'serviceWorker', { configurable: true, value: { getRegistration: async () => ({ showNotification }) } });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    Reflect.deleteProperty(navigator, 'serviceWorker');
    Reflect.deleteProperty(document, 'visibilityState');
  });

  it('announces only uploads that finished since the last look, not those already done', () => {
    const before = new Map([
      ['a', { state: 'uploading' as const }],
      ['b', { state: 'done' as const }],
      ['c', { state: 'waiting' as const }],
    ]);
    const now = [item('a', 'done'), item('b', 'done'), item('c', 'uploading'), item('d', 'done')];
    expect(newlyFinished(before, now).map((i) => i.id)).toEqual(['a']);
  });

  it('shows "Upload finished" with the name and link through the service worker while the app is in the background', async () => {
    await showFinishedNotification(item('a', 'done', { name: 'holiday.mp4', url: 'https://files.example/abc.mp4' }));
    expect(showNotification).toHaveBeenCalledWith('Upload finished', expect.objectContaining({ body: 'holiday.mp4 is uploaded: https://files.example/abc.mp4', tag: 'a' }));
  });

  it('stays quiet when the user is looking at the app or has not allowed notifications', async () => {
    visibility = 'visible';
    await showFinishedNotification(item('a', 'done', { url: 'u' }));
    visibility = 'hidden';
    vi.stubGlobal('Notification', { permission: 'denied' });
    await showFinishedNotification(item('a', 'done', { url: 'u' }));
    expect(showNotification).not.toHaveBeenCalled();
  });
});

describe('the page after a share the service worker could not queue (src/sw/share-target.ts)', () => {
  it('says nothing was saved, says no file came with the share, and says nothing of its own otherwise', () => {
    expect(shareOutcomeMessage('?shared=failed')).toBe(SHARE_FAILED_MESSAGE);
    expect(shareOutcomeMessage('?shared=none')).toMatch(/^Nothing was shared/);
    expect(SHARE_NONE_MESSAGE).not.toMatch(/upload list/);
    expect(shareOutcomeMessage('?shared=1')).toBeNull();
    expect(shareOutcomeMessage('')).toBeNull();
  });
});

describe('the page bridge to the upload worker (issue 5)', () => {
  /**
   * A stand-in for upload.worker.ts behind a real comlink channel. terminate() leaves the channel
   * open, to record what the page still asks of a worker that no longer exists.
   */
  function fakeWorker() {
    const { port1, port2 } = new MessageChannel();
    const listeners = new Map<number, (items: UploadItem[]) => void>();
    let terminated = false;
    const afterTerminate: string[] = [];
    const asked = (what: string) => void (terminated && afterTerminate.push(what));
    let next = 1;
    Comlink.expose(
      {
        init: async () => true,
        setToken: async () => asked('setToken'),
        list: async () => [],
        wake: () => asked('wake'),
        subscribe(listener: (items: UploadItem[]) => void) {
          asked('subscribe');
          listeners.set(next, listener);
          return next++;
        },
        unsubscribe(id: number) {
          asked('unsubscribe');
          listeners.delete(id);
        },
      },
      port2 as unknown as Comlink.Endpoint,
    );
    const worker = Object.assign(port1, { terminate: () => void (terminated = true) }) as unknown as Worker;
    const emit = (items: UploadItem[]) => listeners.forEach((l) => void l(items));
    return { worker, listeners, afterTerminate, emit, close: () => (port1.close(), port2.close()) };
  }

  it('keeps a mounted upload list live after Back from the back/forward cache, on the new worker', async () => {
    const workers: ReturnType<typeof fakeWorker>[] = [];
    const client = new UploadQueueClient(
      () => {
        workers.push(fakeWorker());
        return workers.at(-1)!.worker;
      },
      () => {
        throw new Error('the worker starts: no fallback');
      },
    );
    const seen: string[] = [];
    const unmount = client.subscribe((items) => seen.push(items.map((i) => `${i.name}:${i.state}`).join()));
    try {
      // The bridge's own watcher (notifications) and the list.
      await vi.waitFor(() => expect(workers[0]?.listeners.size).toBe(2));
      workers[0]!.emit([item('video', 'uploading')]);
      await vi.waitFor(() => expect(seen).toContain('video.bin:uploading'));

      // The user follows a link away and comes Back: the page is restored from the bfcache.
      window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }));
      window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
      await vi.waitFor(() => expect(workers[1]?.listeners.size).toBe(2), { timeout: 5000 });
      // The new worker resumes the upload and finishes it: the mounted list hears it.
      workers[1]!.emit([item('video', 'done', { url: 'https://files.example/v.mp4' })]);
      await vi.waitFor(() => expect(seen).toContain('video.bin:done'));

      // Unmounting leaves the new worker; the page asks nothing more of the terminated one.
      window.dispatchEvent(new Event('online'));
      unmount();
      await vi.waitFor(() => expect(workers[1]!.listeners.size).toBe(1));
      expect(workers[0]!.afterTerminate).toEqual([]);
    } finally {
      unmount();
      for (const w of workers) w.close();
    }
  });
});
