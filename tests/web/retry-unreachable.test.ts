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

  it('asks again after an answer that says "not now" (503, or a proxy\'s 502/504), not sooner than its Retry-After', () => {
    const retry = vi.fn();
    const { result } = renderHook(() => useRetryUnreachable(retry));
    result.current.after(new ApiError('The database is unavailable right now. Please try again in a moment.', { status: 503, fromServer: true, retryAfter: '5' }));
    vi.advanceTimersByTime(4_999);
    expect(retry).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(retry).toHaveBeenCalledTimes(1);

    // A proxy's page in front of a restarting server: no words of ours, no Retry-After.
    result.current.after(new ApiError('Request failed with status code 502', { status: 502, fromServer: false }));
    vi.advanceTimersByTime(2_000);
    expect(retry).toHaveBeenCalledTimes(2);
  });

  it('waits at most 30 s whatever Retry-After says', () => {
    const retry = vi.fn();
    const { result } = renderHook(() => useRetryUnreachable(retry));
    result.current.after(new ApiError('Not now.', { status: 503, fromServer: true, retryAfter: String(10 ** 9) }));
    vi.advanceTimersByTime(29_999);
    expect(retry).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(retry).toHaveBeenCalledTimes(1);
  });
});

