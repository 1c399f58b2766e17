import { describe, expect, it } from 'vitest';
import { act, render, waitFor } from '@testing-library/react';
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
});
