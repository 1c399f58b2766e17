import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { FileRecord } from '../../contract/files.ts';
import { ApiError } from '../../src/lib/api-client.ts';
import { routeCalls, serverError, type Handler } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));

const file = (name: string, mime: string, over: Partial<FileRecord> = {}): FileRecord => ({
  url: `http://internal/${name}`,
  actual_name: name,
  original_name: `orig-${name}`,
  username: 'ada',
  size: 2_097_152,
  time_created: new Date(2026, 2, 4, 12).getTime() / 1000,
  width: null,
  height: null,
  mime_type: mime,
  previews: [],
  ...over,
});

const FILES = [file('a.png', 'image/png'), file('b.mp4', 'video/mp4'), file('c.mp3', 'audio/mpeg'), file('d.zip', 'application/zip')];

function handlers(over: Record<string, Handler> = {}): Record<string, Handler> {
  return {
    '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
    '/api/v1/files/uploaded': () => ({ success: true, files: FILES, totalImages: 40 }),
    ...over,
  };
}

beforeEach(() => localStorage.setItem('token', 'tok'));
afterEach(() => apiCall.mockReset());

describe('/uploaded (spec §2)', () => {
  it('asks for 6 per page, newest first, and shows size and month-day-year date', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/uploaded');
    expect(await screen.findByRole('heading', { name: 'orig-a.png' })).toBeInTheDocument();
    expect(apiCall).toHaveBeenCalledWith('/api/v1/files/uploaded', { page: 1, pageSize: 6, filters: { name: '' }, sort: 'newest' });
    expect(screen.getAllByText('2.00 MB · 03-04-2026')).toHaveLength(4);
    // 40 files at 6 per page: 7 pages, windowed with an ellipsis.
    expect(screen.getByRole('button', { name: 'Page 7' })).toBeInTheDocument();
  });

  it('lists the server previews through srcset and an icon per kind, never the original file (issue 11 item 9)', async () => {
    const previews = [
      { width: 640, height: 480, url: 'http://files.test/_p/a-640.webp' },
      { width: 160, height: 120, url: 'http://files.test/_p/a-160.webp' },
      { width: 320, height: 240, url: '/_p/a-320.webp' },
    ];
    routeCalls(apiCall, handlers({ '/api/v1/files/uploaded': () => ({ success: true, files: [{ ...FILES[0]!, previews }, ...FILES.slice(1)], totalImages: 4 }) }));
    const { container } = renderApp('/uploaded');
    const img = await screen.findByRole('img', { name: 'orig-a.png' });
    expect(img).toHaveAttribute('srcset', 'http://files.test/_p/a-160.webp 160w, http://files.test/_p/a-320.webp 320w, http://files.test/_p/a-640.webp 640w');
    expect(img).toHaveAttribute('src', 'http://files.test/_p/a-160.webp');
    expect(img).toHaveAttribute('loading', 'lazy');
    expect(img).toHaveAttribute('sizes');
    // Width and height reserve the box, so nothing moves while it loads.
    expect(img).toHaveAttribute('width', '640');
    // No previews yet (video, audio, zip): an icon for the kind, and no original file is loaded.
    expect([...container.querySelectorAll('[data-kind]')].map((el) => [el.getAttribute('data-kind'), el.classList.contains('file-thumb-icon')])).toEqual([
      ['image', false],
      ['video', true],
      ['audio', true],
      ['archive', true],
    ]);
    expect(container.querySelector('video, audio')).toBeNull();
    expect([...container.querySelectorAll('img')].some((i) => i.getAttribute('src')?.startsWith('http://files.test/a.png'))).toBe(false);
  });

  it('plays the original by MIME type only when asked, and says when no preview exists', async () => {
    routeCalls(apiCall, handlers());
    const { container } = renderApp('/uploaded');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Play orig-b.mp4' }));
    expect(container.querySelector('video')).toHaveAttribute('src', 'http://files.test/b.mp4');
    await user.click(screen.getByRole('button', { name: 'Play orig-c.mp3' }));
    expect(container.querySelector('audio')).toHaveAttribute('src', 'http://files.test/c.mp3');
    expect(screen.queryByRole('button', { name: 'View orig-d.zip' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Play orig-d.zip' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'View orig-a.png' }));
    const img = screen.getByRole('img', { name: 'orig-a.png' });
    expect(img).toHaveAttribute('src', 'http://files.test/a.png');
    fireEvent.error(img); // an image that fails to load
    expect(screen.getByText('A preview is not available for this file')).toBeInTheDocument();
  });

  it('offers to upload when a new user has no files (issue 11 item 12)', async () => {
    routeCalls(apiCall, handlers({ '/api/v1/files/uploaded': () => ({ success: true, files: [], totalImages: 0 }) }));
    renderApp('/uploaded');
    expect(await screen.findByText('You have not uploaded any files yet.', { exact: false })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Upload files' })).toHaveAttribute('href', '/dashboard');
  });

  it('sends the sort and the name filter', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/uploaded');
    const user = userEvent.setup();
    await user.selectOptions(await screen.findByLabelText('Sort'), 'largest');
    await user.type(screen.getByLabelText('Filter by name'), 'cat');
    await waitFor(() =>
      expect(apiCall).toHaveBeenCalledWith('/api/v1/files/uploaded', { page: 1, pageSize: 6, filters: { name: 'cat' }, sort: 'largest' }),
    );
  });

  it("asks before deleting and says 'An error occurred while deleting the file' on failure", async () => {
    routeCalls(apiCall, handlers({ '/api/v1/files/delete': () => { throw new Error('Network Error'); } }));
    renderApp('/uploaded');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete orig-d.zip' }));
    const dialog = screen.getByRole('alertdialog');
    expect(dialog).toHaveTextContent('Delete orig-d.zip?');
    await user.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect(apiCall).toHaveBeenCalledWith('/api/v1/files/delete', { filePath: 'http://internal/d.zip' });
    expect(await screen.findByText('An error occurred while deleting the file')).toBeInTheDocument();
  });

  it('does not delete when the confirmation is cancelled', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/uploaded');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete orig-a.png' }));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/files/delete', expect.anything());
  });
});

describe('/uploaded when no answer comes', () => {
  const UNREACHABLE = 'The server cannot be reached right now. This list will load by itself as soon as it answers.';
  const listCalls = () => apiCall.mock.calls.filter(([path]) => path === '/api/v1/files/uploaded').length;

  afterEach(() => vi.useRealTimers());

  it('says the server cannot be reached, not that an error occurred, and loads the list by itself once it answers', async () => {
    let failures = 2;
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/files/uploaded': () => {
          if (failures-- > 0) throw new ApiError('Network Error', { status: 0, fromServer: false });
          return { success: true, files: FILES, totalImages: 40 };
        },
      }),
    );
    renderApp('/uploaded');
    expect(await screen.findByText(UNREACHABLE)).toBeInTheDocument();
    expect(screen.queryByText(/internal error/)).not.toBeInTheDocument();
    // Tried again after 1 s, failed, then after 2 s more: the list arrives with no reload.
    expect(await screen.findByText('orig-a.png')).toBeInTheDocument();
    expect(screen.queryByText(UNREACHABLE)).not.toBeInTheDocument();
    expect(listCalls()).toBe(3);
  });

  it('says what the server said when it answers "not now" (503), and loads the list by itself once it can', async () => {
    let failures = 1;
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/files/uploaded': () => {
          if (failures-- > 0) throw new ApiError('The database is unavailable right now. Please try again in a moment.', { status: 503, fromServer: true, retryAfter: '1' });
          return { success: true, files: FILES, totalImages: 40 };
        },
      }),
    );
    renderApp('/uploaded');
    expect(
      await screen.findByText('The database is unavailable right now. Please try again in a moment. This list will load by itself as soon as the server can answer.'),
    ).toBeInTheDocument();
    expect(screen.queryByText(/^Error:/)).not.toBeInTheDocument();
    expect(await screen.findByText('orig-a.png')).toBeInTheDocument();
    expect(listCalls()).toBe(2);
  });

  it('shows an answer that refuses as an error and does not ask again by itself', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    routeCalls(apiCall, handlers({ '/api/v1/files/uploaded': () => { throw serverError(500, 'The database is not answering'); } }));
    renderApp('/uploaded');
    expect(await screen.findByText('Error: The database is not answering')).toBeInTheDocument();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(listCalls()).toBe(1);
  });
});

describe('/uploaded name filter while answers arrive out of order', () => {
  it('keeps the list of the newest filter when an older query answers after it', async () => {
    let answerOlder: (value: unknown) => void = () => {};
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/files/uploaded': (body) => {
          const name = (body.filters as { name: string }).name;
          // The query for "c" is slow; the one for "cat" answers at once.
          if (name === 'c') return new Promise((resolve) => (answerOlder = resolve));
          if (name === 'cat') return { success: true, files: [file('cat.png', 'image/png')], totalImages: 1 };
          return { success: true, files: FILES, totalImages: 4 };
        },
      }),
    );
    renderApp('/uploaded');
    const user = userEvent.setup();
    const input = await screen.findByLabelText('Filter by name');
    await screen.findByRole('heading', { name: 'orig-a.png' });
    await user.type(input, 'c');
    await waitFor(() => expect(apiCall).toHaveBeenCalledWith('/api/v1/files/uploaded', expect.objectContaining({ filters: { name: 'c' } })));
    await user.type(input, 'at');
    expect(await screen.findByRole('heading', { name: 'orig-cat.png' })).toBeInTheDocument();
    await act(async () => answerOlder({ success: true, files: [file('cow.png', 'image/png')], totalImages: 1 }));
    expect(screen.queryByRole('heading', { name: 'orig-cow.png' })).toBeNull();
    expect(screen.getByRole('heading', { name: 'orig-cat.png' })).toBeInTheDocument();
  });
});

describe('/uploaded empty state while a name filter is typed', () => {
  it('says "No files yet" only once the name in the field has been answered with no files, not while the list is still the last name\'s', async () => {
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/files/uploaded': (body) =>
          (body.filters as { name: string }).name === 'zzz' ? { success: true, files: [], totalImages: 0 } : { success: true, files: FILES, totalImages: 4 },
      }),
    );
    renderApp('/uploaded');
    const user = userEvent.setup();
    const input = await screen.findByLabelText('Filter by name');
    await screen.findByRole('heading', { name: 'orig-a.png' });
    await user.type(input, 'zzz');
    expect(await screen.findByText('No files match this name.')).toBeInTheDocument();
    // Cleared: until the debounce ends and "" is answered, the empty list is the answer for "zzz".
    await user.clear(input);
    expect(screen.queryByText('No files yet')).toBeNull();
    expect(screen.queryByText('No files match this name.')).toBeNull();
    expect(await screen.findByRole('heading', { name: 'orig-a.png' })).toBeInTheDocument();
    expect(screen.queryByText('No files yet')).toBeNull();
  });
});

describe('/uploaded after a delete empties the last page', () => {
  it('goes back to the last page that has files when the list shrank elsewhere too, not to an empty page with no way back', async () => {
    // Page 2 shows two files; one of them is deleted on another device before this one deletes the other.
    let files = [...FILES, file('e.png', 'image/png'), file('f.png', 'image/png'), file('g.png', 'image/png'), file('h.png', 'image/png')];
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/files/uploaded': (body) => {
          const page = Number(body.page);
          return { success: true, files: files.slice((page - 1) * 6, page * 6), totalImages: files.length };
        },
        '/api/v1/files/delete': (body) => {
          files = files.filter((f) => f.url !== body.filePath);
          return { success: true };
        },
      }),
    );
    renderApp('/uploaded');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Page 2' }));
    await screen.findByRole('heading', { name: 'orig-h.png' });
    files = files.filter((f) => f.actual_name !== 'g.png');
    await user.click(screen.getByRole('button', { name: 'Delete orig-h.png' }));
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByRole('heading', { name: 'orig-a.png' }, { timeout: 5_000 })).toBeInTheDocument();
    expect(screen.queryByText('No files yet')).toBeNull();
    expect(apiCall).toHaveBeenLastCalledWith('/api/v1/files/uploaded', expect.objectContaining({ page: 1 }));
  });
});

describe('/uploaded keyboard focus after a delete', () => {
  it('puts focus on the list heading once the deleted card is gone, not on nothing', async () => {
    let files = [...FILES];
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/files/uploaded': () => ({ success: true, files, totalImages: files.length }),
        '/api/v1/files/delete': (body) => {
          files = files.filter((f) => f.url !== body.filePath);
          return { success: true };
        },
      }),
    );
    renderApp('/uploaded');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete orig-b.mp4' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'orig-b.mp4' })).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Uploaded Files' })), { timeout: 3_000 });
  });
});
