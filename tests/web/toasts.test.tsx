import { describe, expect, it } from 'vitest';
import { act, render, screen, waitFor } from '@testing-library/react';
import toast, { useToasterStore } from 'react-hot-toast';
import { Toasts } from '../../src/components/toasts.tsx';
import { notifyError } from '../../src/lib/notify.ts';

let visible: string[] = [];
function Probe() {
  const { toasts } = useToasterStore();
  visible = toasts.filter((t) => t.visible).map((t) => String(t.message));
  return null;
}

describe('notifications (spec §9: at most 5 at once)', () => {
  it('keeps only the five newest toasts visible', async () => {
    render(
      <>
        <Toasts />
        <Probe />
      </>,
    );
    act(() => {
      for (let i = 1; i <= 7; i++) notifyError(`message ${i}`);
    });
    await waitFor(() => expect(visible.sort()).toEqual(['message 3', 'message 4', 'message 5', 'message 6', 'message 7']));
    act(() => toast.remove());
  });

  it('shows a toast raised before the root rendered, and the next one after it is gone', async () => {
    // A toast from a module that ran before the root rendered (a redirect's message, say).
    act(() => {
      notifyError('raised before the page');
    });
    const { container } = render(<Toasts />);
    expect(await screen.findByText('raised before the page')).toBeTruthy();
    act(() => toast.remove());
    await waitFor(() => expect(screen.queryByText('raised before the page')).toBeNull());
    act(() => {
      notifyError('raised later');
    });
    expect(await screen.findByText('raised later')).toBeTruthy();
    expect(container.querySelector('[role="status"]')?.textContent).toContain('raised later');
    act(() => toast.remove());
  });

  it('puts nothing in the page until the first toast (issue 9: no toast styles built while a page hydrates)', async () => {
    const { container } = render(<Toasts />);
    expect(container.innerHTML).toBe('');
    act(() => {
      notifyError('now there is one');
    });
    expect(await screen.findByText('now there is one')).toBeTruthy();
    act(() => toast.remove());
  });
});
