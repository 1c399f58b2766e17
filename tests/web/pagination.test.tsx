import { describe, expect, it, vi } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Pagination } from '../../src/components/pagination.tsx';
import { pageWindow, parsePageNumber } from '../../src/components/page-window.ts';

describe('pageWindow (spec §9)', () => {
  it('lists every page when there are 5 or fewer', () => {
    expect(pageWindow(1, 1)).toEqual([1]);
    expect(pageWindow(3, 5)).toEqual([1, 2, 3, 4, 5]);
  });
  it('shows a window with ellipsis beyond 5 pages', () => {
    expect(pageWindow(1, 10)).toEqual([1, 2, 3, 4, 'ellipsis-end', 10]);
    expect(pageWindow(5, 10)).toEqual([1, 'ellipsis-start', 4, 5, 6, 'ellipsis-end', 10]);
    expect(pageWindow(10, 10)).toEqual([1, 'ellipsis-start', 7, 8, 9, 10]);
    expect(pageWindow(6, 6)).toEqual([1, 'ellipsis-start', 3, 4, 5, 6]);
  });
});

describe('parsePageNumber (spec §5: an integer from 1 to the last page)', () => {
  it.each(['0', '11', '2.5', '-1', 'abc', '', ' '])('refuses %j', (v) => expect(parsePageNumber(v, 10)).toBeNull());
  it('accepts 1..last', () => {
    expect(parsePageNumber('1', 10)).toBe(1);
    expect(parsePageNumber(' 10 ', 10)).toBe(10);
  });
});

describe('<Pagination>', () => {
  it('renders numbered buttons, marks the current page and shows an ellipsis', () => {
    render(<Pagination page={5} totalPages={12} onPageChange={() => {}} />);
    const nav = screen.getByRole('navigation', { name: 'Pagination' });
    expect(within(nav).getByRole('button', { name: 'Page 5' })).toHaveAttribute('aria-current', 'page');
    expect(within(nav).getByRole('button', { name: 'Page 12' })).toBeInTheDocument();
    expect(within(nav).queryByRole('button', { name: 'Page 8' })).not.toBeInTheDocument();
    expect(within(nav).getAllByText('…')).toHaveLength(2);
  });

  it("says 'Invalid page number' for a bad 'Go to page' and does not move", async () => {
    const onPageChange = vi.fn();
    render(<Pagination page={1} totalPages={7} onPageChange={onPageChange} />);
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Go to page'), '8');
    await user.click(screen.getByRole('button', { name: 'Go' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Invalid page number');
    expect(onPageChange).not.toHaveBeenCalled();

    await user.clear(screen.getByLabelText('Go to page'));
    await user.type(screen.getByLabelText('Go to page'), '6{Enter}');
    expect(onPageChange).toHaveBeenCalledWith(6);
    expect(screen.queryByText('Invalid page number')).not.toBeInTheDocument();
  });

  it('moves with a page button', async () => {
    const onPageChange = vi.fn();
    render(<Pagination page={1} totalPages={3} onPageChange={onPageChange} />);
    await userEvent.setup().click(screen.getByRole('button', { name: 'Page 3' }));
    expect(onPageChange).toHaveBeenCalledWith(3);
  });
});
