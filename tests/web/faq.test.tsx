import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, fireEvent, screen, within } from '@testing-library/react';
import { renderApp } from './helpers/render-app.tsx';
import { setRuntimeConfig, getRuntimeConfig } from '../../src/lib/runtime-config.ts';

afterEach(() => vi.useRealTimers());

const WALLETS = [
  { label: 'Bitcoin (BTC)', address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
  { label: 'Monero (XMR)', address: '44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3XjrpDtQGv7SqSsaBYBb98uNbr2VBBEt7f2wfn3RVGQBEP3A' },
];

/** The FAQ itself, without the layout's navigation lists. */
const faq = () => screen.getByRole('article');

describe('FAQ donation wallets (spec §1: "Donation wallets are listed")', () => {
  it("lists the operator's wallets with their full addresses", () => {
    renderApp('/faq', { donationWallets: WALLETS });
    const items = within(faq()).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent('Bitcoin (BTC)');
    expect(within(items[0]!).getByText(WALLETS[0]!.address).tagName).toBe('CODE');
    expect(items[1]).toHaveTextContent('Monero (XMR)');
    expect(within(items[1]!).getByText(WALLETS[1]!.address).tagName).toBe('CODE');
    expect(screen.queryByText(/ask the operator/i)).not.toBeInTheDocument();
    expect(screen.queryByText(/no donation wallets/i)).not.toBeInTheDocument();
    // The rest of the FAQ stays as spec §1 has it.
    expect(screen.getByText('$131')).toBeInTheDocument();
  });

  it('copies an address and confirms for one second', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    vi.useFakeTimers();
    renderApp('/faq', { donationWallets: WALLETS });
    const monero = within(faq()).getAllByRole('listitem')[1]!;
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Copy Monero (XMR) address' }));
    });
    expect(writeText).toHaveBeenCalledTimes(1);
    expect(writeText).toHaveBeenCalledWith(WALLETS[1]!.address);
    expect(within(monero).getByRole('status')).toHaveTextContent('Copied to clipboard');
    act(() => vi.advanceTimersByTime(1000));
    expect(within(monero).getByRole('status')).toHaveTextContent('');
  });

  it('says none are listed, with no placeholder, when the operator lists none', () => {
    renderApp('/faq', { donationWallets: [] });
    expect(screen.getByText(/No donation wallets are listed yet\./)).toBeInTheDocument();
    expect(screen.queryByText(/ask the operator/i)).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Copy/ })).not.toBeInTheDocument();
    expect(within(faq()).queryByRole('list')).not.toBeInTheDocument();
  });

  it('treats a config.json without wallets (an old cached one) as none listed', () => {
    renderApp('/faq');
    expect(getRuntimeConfig().donationWallets).toEqual([]);
    expect(screen.getByText(/No donation wallets are listed yet\./)).toBeInTheDocument();
  });

  it('drops a malformed donationWallets value instead of crashing', () => {
    setRuntimeConfig(JSON.parse('{"donationWallets":null}') as never);
    expect(getRuntimeConfig().donationWallets).toEqual([]);
    setRuntimeConfig(JSON.parse('{"donationWallets":[{"label":"BTC","address":"bc1q"},{"label":1},"x",null]}') as never);
    expect(getRuntimeConfig().donationWallets).toEqual([{ label: 'BTC', address: 'bc1q' }]);
  });
});
