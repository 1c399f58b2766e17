import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderHook } from '@testing-library/react';
import { useRetryUnreachable } from '../../src/lib/use-retry-unreachable.ts';
import { ApiError } from '../../src/lib/api-errors.ts';

// The pauses themselves, on fake time: the screens' tests (uploaded-files, settings, admin users)
// only see the list arrive, within however long a busy machine takes to render it.
describe('a read with no answer is tried again after 1 s, then 2 s more', () => {
  const noAnswer = () => new ApiError('Network Error', { status: 0, fromServer: false });

  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('waits 1 s, then 2 s, and starts again at 1 s after an answer', () => {
    const retry = vi.fn();
    const { result } = renderHook(() => useRetryUnreachable(retry));
    result.current.after(noAnswer());
    vi.advanceTimersByTime(999);
    expect(retry).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(retry).toHaveBeenCalledTimes(1);

    result.current.after(noAnswer());
    vi.advanceTimersByTime(1_999);
    expect(retry).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(retry).toHaveBeenCalledTimes(2);

    result.current.settled();
    result.current.after(noAnswer());
    vi.advanceTimersByTime(1_000);
    expect(retry).toHaveBeenCalledTimes(3);
  });

  it('does not ask again after a refusal the server sent', () => {
    const retry = vi.fn();
    const { result } = renderHook(() => useRetryUnreachable(retry));
    result.current.after(new ApiError('The database is not answering', { status: 500, fromServer: true }));
    vi.advanceTimersByTime(120_000);
    expect(retry).not.toHaveBeenCalled();
  });
});
