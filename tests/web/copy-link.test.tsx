import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { CopyLink } from '../../src/components/copy-link.tsx';
import { shareLink } from '../../src/lib/clipboard.ts';

afterEach(() => vi.useRealTimers());

describe('copy on click (spec §4: "Copied to clipboard" for 1 second)', () => {
  it('copies the link and confirms for one second', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    vi.useFakeTimers();
    render(<CopyLink url="http://files.test/abc123.png" />);
    await act(async () => {
      fireEvent.click(screen.getByRole('link', { name: 'http://files.test/abc123.png' }));
    });
    expect(writeText).toHaveBeenCalledWith('http://files.test/abc123.png');
    expect(screen.getByRole('status')).toHaveTextContent('Copied to clipboard');
    act(() => vi.advanceTimersByTime(999));
    expect(screen.getByRole('status')).toHaveTextContent('Copied to clipboard');
    act(() => vi.advanceTimersByTime(1));
    expect(screen.getByRole('status')).toHaveTextContent('');
  });
});

describe('a Copy link button', () => {
  it('says "Copied" in its own place for the second, and the status says "Copied to clipboard"', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    vi.useFakeTimers();
    render(<CopyLink url="http://files.test/abc123.png" asButton />);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Copy link' }));
    });
    expect(writeText).toHaveBeenCalledWith('http://files.test/abc123.png');
    expect(screen.getByRole('button', { name: 'Copied' })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('Copied to clipboard');
    act(() => vi.advanceTimersByTime(1000));
    expect(screen.getByRole('button', { name: 'Copy link' })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('');
  });
});

describe('shareLink (spec §3: files host + last path segment of url)', () => {
  it('keeps only the last segment', () => {
    expect(shareLink('https://files.example', 'http://internal:8082/x/y/abc.png')).toBe('https://files.example/abc.png');
    expect(shareLink('https://files.example/', 'abc.png')).toBe('https://files.example/abc.png');
  });
});
