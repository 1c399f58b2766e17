import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { FilterFold } from '../../src/components/filter-fold.tsx';

describe('the folded filters (issue 11 item 11)', () => {
  it('names the sort on its button where the fold holds one, and counts a sort that is not the default', async () => {
    const { rerender } = render(
      <FilterFold active={0} sorts>
        <label>
          Sort <select />
        </label>
      </FilterFold>,
    );
    // jsdom is a wide screen: the fold starts open.
    const toggle = screen.getByRole('button', { name: 'Hide filters & sort' });
    await userEvent.click(toggle);
    expect(screen.getByRole('button', { name: 'Filters & sort' })).toHaveAttribute('aria-expanded', 'false');
    rerender(
      <FilterFold active={1} sorts>
        <span />
      </FilterFold>,
    );
    expect(screen.getByRole('button', { name: 'Filters & sort (1)' })).toBeInTheDocument();
  });

  it('says Filters alone where there is nothing to sort', async () => {
    render(
      <FilterFold active={2}>
        <span />
      </FilterFold>,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Hide filters' }));
    expect(screen.getByRole('button', { name: 'Filters (2)' })).toBeInTheDocument();
  });
});
