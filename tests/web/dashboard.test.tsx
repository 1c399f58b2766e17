import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { setUploader } from '../../src/upload/page/instance.ts';
import type { UploadItem, Uploader } from '../../src/upload/uploader.ts';
import { routeCalls, serverError, type Handler } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));

/** A scripted uploader: the dashboard must only ever talk to the Uploader interface. */
class FakeUploader implements Uploader {
  items: UploadItem[] = [];
  enqueued: File[] = [];
  private listeners = new Set<(i: UploadItem[]) => void>();
  async enqueue(files: File[]) {
    this.enqueued.push(...files);
  }
  async list() {
    return this.items;
  }
  subscribe(l: (i: UploadItem[]) => void) {
    this.listeners.add(l);
    l(this.items);
    return () => this.listeners.delete(l);
  }
  push(items: UploadItem[]) {
    this.items = items;
    this.listeners.forEach((l) => l(items));
  }
  pause = vi.fn(async () => {});
  resume = vi.fn(async () => {});
  cancel = vi.fn(async () => {});
  retry = vi.fn(async () => {});
  clearFinished = vi.fn(async () => {});
  undoCancel = vi.fn(async () => {});
  chooseAgain = vi.fn(async () => {});
  signOut = vi.fn(async () => {});
  signedInAs = vi.fn(async () => {});
}

const item = (over: Partial<UploadItem>): UploadItem => ({
  id: 'u1',
  name: 'cat.png',
  size: 1000,
  type: 'image/png',
  state: 'uploading',
  ackedBytes: 0,
  persistent: false,
  createdAt: 0,
  ...over,
});

function handlers(over: Record<string, Handler> = {}): Record<string, Handler> {
  return {
    '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
    '/api/v1/utils/filesize': () => ({ success: true, maxFileSize: 2048 }),
    ...over,
  };
}

let uploader: FakeUploader;
beforeEach(() => {
  localStorage.setItem('token', 'tok');
  uploader = new FakeUploader();
  setUploader(uploader);
});
afterEach(() => {
  apiCall.mockReset();
  setUploader(null);
});

describe('dashboard (spec §2, §4)', () => {
  it('shows the maximum file size in GB from 1024 MB', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/dashboard');
    expect(await screen.findByText('Maximum file size: 2.00 GB')).toBeInTheDocument();
  });

  it('only logs a failed max size fetch', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    routeCalls(apiCall, handlers({ '/api/v1/utils/filesize': () => { throw serverError(500, 'nope'); } }));
    renderApp('/dashboard');
    await waitFor(() => expect(log).toHaveBeenCalled());
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    log.mockRestore();
  });

  it('queues several picked files, dropped files and pasted files', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/dashboard');
    const user = userEvent.setup();
    const a = new File(['a'], 'a.txt', { type: 'text/plain' });
    const b = new File(['b'], 'b.txt', { type: 'text/plain' });
    await user.upload(await screen.findByLabelText('Choose files to upload'), [a, b]);
    const c = new File(['c'], 'c.png', { type: 'image/png' });
    fireEvent.drop(screen.getByTestId('dropzone'), { dataTransfer: { files: [c] } });
    const d = new File(['d'], 'd.png', { type: 'image/png' });
    const paste = new Event('paste', { bubbles: true }) as Event & { clipboardData: unknown };
    paste.clipboardData = { files: [d] };
    document.dispatchEvent(paste);
    expect(uploader.enqueued.map((f) => f.name)).toEqual(['a.txt', 'b.txt', 'c.png', 'd.png']);
  });

  it('shows a progress bar per file and, at 100, a link that copies on click', async () => {
    routeCalls(apiCall, handlers());
    const writeText = vi.fn().mockResolvedValue(undefined);
    renderApp('/dashboard');
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    await screen.findByText('Maximum file size: 2.00 GB');
    uploader.push([item({ ackedBytes: 250 }), item({ id: 'u2', name: 'dog.png', state: 'done', ackedBytes: 1000, url: 'http://internal/dog123.png' })]);
    const bars = await screen.findAllByRole('progressbar');
    expect(bars.map((b) => b.getAttribute('aria-valuenow'))).toEqual(['25', '100']);
    const link = screen.getByRole('link', { name: 'http://files.test/dog123.png' });
    fireEvent.click(link);
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('http://files.test/dog123.png'));
    expect(await screen.findByText('Copied to clipboard')).toBeInTheDocument();
  });

  it('says when uploads wait because the session ended, and signs in again keeping them', async () => {
    routeCalls(apiCall, handlers());
    const { router } = renderApp('/dashboard');
    await screen.findByText('Maximum file size: 2.00 GB');
    // The server refused the session (401) mid-upload: the row used to say "Queued" for good.
    uploader.push([item({ state: 'waiting', ackedBytes: 610, signInAgain: true })]);
    expect(await screen.findByText(/Waiting for you to sign in again/)).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('Your session has ended');
    await userEvent.setup().click(screen.getByRole('button', { name: 'Sign in again' }));
    expect(uploader.signOut).toHaveBeenCalledWith(true);
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem('token')).toBeNull();
  });

  it("says why an upload retried by itself is waiting, in the server's words", async () => {
    routeCalls(apiCall, handlers());
    renderApp('/dashboard');
    await screen.findByText('Maximum file size: 2.00 GB');
    // Uploads switched off (503): the row used to say "Uploading · 0%" for as long as it lasted.
    uploader.push([item({ notice: 'Uploading is currently disabled.' })]);
    expect(await screen.findByText(/Waiting to try again/)).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('Error: Uploading is currently disabled.');
    // A chunk accepted again: the reason goes.
    uploader.push([item({ ackedBytes: 500 })]);
    expect(await screen.findByText(/Uploading · 50%/)).toBeInTheDocument();
    expect(screen.queryByText(/Uploading is currently disabled/)).toBeNull();
  });

  it('says when a cancel came too late and the file stays online, with its link', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/dashboard');
    await screen.findByText('Maximum file size: 2.00 GB');
    const notice = 'Too late to cancel: the file was already uploaded and could not be deleted. Delete it from your files.';
    uploader.push([item({ state: 'done', ackedBytes: 1000, url: 'http://internal/cat1.png', notice })]);
    expect(await screen.findByRole('alert')).toHaveTextContent(notice);
    expect(screen.getByRole('link', { name: 'http://files.test/cat1.png' })).toBeInTheDocument();
  });

  it("shows an upload's failure and offers a retry", async () => {
    routeCalls(apiCall, handlers());
    renderApp('/dashboard');
    await screen.findByText('Maximum file size: 2.00 GB');
    uploader.push([item({ state: 'failed', error: 'Error uploading file' })]);
    expect(await screen.findByText('Error uploading file')).toBeInTheDocument();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Retry' }));
    expect(uploader.retry).toHaveBeenCalledWith('u1');
  });
});

describe('Upload via URL (spec §5, §8)', () => {
  async function openUrlForm() {
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Upload via URL' }));
    return user;
  }

  it("refuses what does not parse as a URL: 'Please enter a valid URL.'", async () => {
    routeCalls(apiCall, handlers());
    renderApp('/dashboard');
    const user = await openUrlForm();
    await user.type(screen.getByLabelText('File URL'), 'not a url');
    await user.click(screen.getByRole('button', { name: 'Upload' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Please enter a valid URL.');
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/files/upload-url', expect.anything());
  });

  it("says 'Error uploading via URL' when the server gives no reason", async () => {
    routeCalls(apiCall, handlers({ '/api/v1/files/upload-url': () => { throw new Error('Network Error'); } }));
    renderApp('/dashboard');
    const user = await openUrlForm();
    await user.type(screen.getByLabelText('File URL'), 'https://example.com/a.png');
    await user.click(screen.getByRole('button', { name: 'Upload' }));
    expect(await screen.findByText('Error uploading via URL')).toBeInTheDocument();
  });

  it('uploads a valid URL and shows its share link', async () => {
    routeCalls(apiCall, handlers({ '/api/v1/files/upload-url': () => ({ success: true, url: 'http://internal/zz9.png', file: {} }) }));
    renderApp('/dashboard');
    const user = await openUrlForm();
    await user.type(screen.getByLabelText('File URL'), 'https://example.com/a.png');
    await user.click(screen.getByRole('button', { name: 'Upload' }));
    expect(apiCall).toHaveBeenCalledWith('/api/v1/files/upload-url', { url: 'https://example.com/a.png' });
    expect(await screen.findByRole('link', { name: 'http://files.test/zz9.png' })).toBeInTheDocument();
  });
});
