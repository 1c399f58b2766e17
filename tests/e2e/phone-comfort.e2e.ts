import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ADMIN, startStack, type Stack } from './harness.ts';
import { uploadViaApi } from './flows.ts';
import { newUser, openPhone, safeAreaInsets } from './phone-context.ts';
import { screenshot } from './page-checks.ts';
import { photoPng } from './picture.ts';

/**
 * What a phone review of every screen found after the screens worked: things a person holding
 * the phone notices (a sheet that needs a scroll to cancel, a page sliding under a dialog, names
 * cut to one line, toasts under the notch), each against the real server in Chromium.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * A wheel turned over (x, y), settled: resolves once the page has had the event and painted
 * twice after it, so a scroll it caused has landed (the page scrolls on its own time).
 */
async function wheel(page: Page, x: number, y: number, dy: number): Promise<void> {
  await page.mouse.move(x, y);
  await page.evaluate(() => {
    const w = window as unknown as { __wheeled: Promise<void> };
    w.__wheeled = new Promise((resolve) =>
      addEventListener('wheel', () => requestAnimationFrame(() => requestAnimationFrame(() => resolve())), { once: true, capture: true, passive: true }),
    );
  });
  await page.mouse.wheel(0, dy);
  await page.evaluate(() => (window as unknown as { __wheeled: Promise<void> }).__wheeled);
}

/** Where the page rests: read once it has not moved for three frames (a wheel's scroll is animated). */
const scrollY = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let last = window.scrollY;
        let still = 0;
        const look = () => {
          still = window.scrollY === last ? still + 1 : 0;
          last = window.scrollY;
          if (still >= 3) resolve(Math.round(last));
          else requestAnimationFrame(look);
        };
        requestAnimationFrame(look);
      }),
  );
const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;

describe('sheets and dialogs on a phone', () => {
  it('a user’s actions on a phone on its side: Cancel shows without a scroll, and the page behind stays still', async () => {
    const { name } = await newUser(stack, 'sideways');
    const admin = await openPhone(stack, await stack.login(ADMIN.username, ADMIN.password), 'none', { width: 740, height: 360 });
    const { page } = admin;
    try {
      await page.goto(`${stack.siteUrl}/admin/users`);
      await page.getByRole('button', { name: /^Filters/ }).click();
      await page.getByRole('searchbox', { name: 'Search' }).fill(name);
      // The newcomer's row is already on the unfiltered first page: wait for the search itself,
      // or the list shrinks under the scrolls below (a CI run saw the page move 414 → 361 "by
      // itself" with the sheet open: the shorter page clamped it).
      await page.locator('.admin-count', { hasText: /^1 user$/ }).waitFor();
      const actions = page.getByRole('button', { name: `Actions for ${name}` });
      await actions.waitFor();
      // The page is taller than a phone on its side: it scrolls.
      await wheel(page, 370, 250, 150);
      expect(await scrollY(page)).toBeGreaterThan(0);

      await actions.click();
      const sheet = page.getByRole('dialog', { name });
      await sheet.waitFor();
      // Four actions one under another made the sheet ~400 px tall in 360: Cancel needed a scroll.
      const cancel = (await sheet.getByRole('button', { name: 'Cancel' }).boundingBox())!;
      expect(cancel.y + cancel.height).toBeLessThanOrEqual(360);
      expect(await sheet.evaluate((el) => el.scrollHeight <= el.clientHeight)).toBe(true);

      // Scrolling over the backdrop moved the list underneath, so the row was elsewhere on close.
      // (Measured from here: the click itself brings Actions into view.)
      const before = await scrollY(page);
      await wheel(page, 370, 20, 150);
      expect(await scrollY(page)).toBe(before);
      await screenshot(page, 'phone-740-landscape-user-actions');

      // Ban asks first: the dialog over the page holds it still too. (Closing the sheet gives
      // focus back to Actions, which may bring it into view first.)
      await sheet.getByRole('button', { name: 'Ban' }).click();
      const confirm = page.getByRole('alertdialog');
      await confirm.waitFor();
      const underDialog = await scrollY(page);
      await wheel(page, 370, 30, -150);
      expect(await scrollY(page)).toBe(underDialog);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });

      // Closed, the page scrolls again.
      const closed = await scrollY(page);
      await wheel(page, 370, 250, -150);
      expect(await scrollY(page)).toBeLessThan(closed);
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});

describe('the landing page on a phone on its side', () => {
  it('shows Login in the first screen, beside the picture of the app', async () => {
    const visitor = await openPhone(stack, null, 'none', { width: 844, height: 390 });
    const { page } = visitor;
    try {
      await page.goto(`${stack.siteUrl}/`);
      const login = page.getByRole('link', { name: 'Login', exact: true }).last();
      await login.waitFor();
      // Centred against the 620 px picture, the text (and Login) started below the first screen.
      const button = (await login.boundingBox())!;
      expect(button.y + button.height).toBeLessThanOrEqual(390);
      const picture = await box(page, '.hero-shot img');
      expect(picture.x).toBeGreaterThan(button.x + button.width);
      await screenshot(page, 'landing-844-landscape');
      expect(visitor.errors).toEqual([]);
    } finally {
      await visitor.close();
    }
  });
});

describe('file names on a phone', () => {
  it('shows a long name whole, so two photos that differ near the end can be told apart, and an endless one by its start and its end', async () => {
    const { token } = await newUser(stack, 'names');
    const names = ['PXL_20261201_093012345_holiday_by_the_sea_with_grandma.png', 'PXL_20261201_093012346_holiday_by_the_sea_with_grandma.png'];
    // A name near the 255-character limit is shortened in its middle, not a card-high wall of
    // text, and not cut at the end either: cut after three lines it lost its ".png".
    const endless = `${'a_very_long_name_'.repeat(13)}taken_at_noon.png`;
    for (const n of [...names, endless]) await uploadViaApi(stack, token, n, await photoPng(), 'image/png');
    const phone = await openPhone(stack, token, 'none');
    const { page } = phone;
    // Cut to one line, every card read "PXL_20261201_0930…" and the tooltip never shows on touch.
    const shownWhole = (selector: string) =>
      page.locator(selector).evaluateAll((els) =>
        els.map((el) => ({ text: el.textContent, whole: el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight + 1 })),
      );
    const endlessShown = (selector: string) =>
      page.locator(selector, { hasText: endless }).evaluate((el) => {
        const shown = el.querySelector('[aria-hidden="true"]')?.textContent ?? '';
        return {
          cut: el.scrollHeight > el.clientHeight + 1,
          end: shown.endsWith('_taken_at_noon.png'),
          start: shown.startsWith('a_very_long_name_a_very_'),
          // A screen reader still hears the whole name.
          heard: el.querySelector('.visually-hidden')?.textContent,
        };
      });
    try {
      await page.goto(`${stack.siteUrl}/uploaded`);
      await page.locator('.file-name').nth(1).waitFor();
      expect(await shownWhole('.file-name')).toEqual(expect.arrayContaining(names.map((text) => ({ text, whole: true }))));
      expect(await endlessShown('.file-name')).toEqual({ cut: false, end: true, start: true, heard: endless });

      // Recent uploads' cards are half as wide: a name gives way sooner there, still told apart
      // from the other by its start and ending as it does.
      await page.goto(`${stack.siteUrl}/dashboard`);
      await page.locator('.recent-name').nth(1).waitFor();
      const recent = await page.locator('.recent-name').evaluateAll((els) =>
        els.map((el) => ({
          shown: el.querySelector('[aria-hidden="true"]')?.textContent ?? el.textContent,
          heard: el.querySelector('.visually-hidden')?.textContent ?? el.textContent,
          whole: el.scrollHeight <= el.clientHeight + 1,
        })),
      );
      const photos = recent.filter((r) => names.includes(r.heard ?? ''));
      expect(photos).toHaveLength(2);
      expect(new Set(photos.map((p) => p.shown)).size).toBe(2);
      expect(photos.every((p) => p.whole && p.shown?.endsWith('with_grandma.png'))).toBe(true);
      expect(await endlessShown('.recent-name')).toEqual({ cut: false, end: true, start: true, heard: endless });
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});

describe('toasts on a phone', () => {
  it('rise above the bottom nav, clear of the notch, the top bar and the home bar', async () => {
    const { name, token } = await newUser(stack, 'toasty');
    const phone = await openPhone(stack, token, 'none');
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/settings`);
      await page.getByLabel('New username').waitFor();
      await safeAreaInsets(page, { top: 47, bottom: 34 });
      await page.getByLabel('New username').fill(`${name}x`);
      await page.getByRole('button', { name: 'Update username' }).click();
      const toast = page.locator('.toast').filter({ hasText: /updated/i });
      await toast.waitFor();
      // It slides up into place (react-hot-toast's enter animation, whose easing overshoots: near
      // its end the toast is scaled past 1, and CI once measured it 0.25 px over the bar it rests
      // above). Where it comes to rest is what counts.
      await page.evaluate(() =>
        Promise.all(
          document
            .getAnimations()
            .filter((a) => a.effect?.getComputedTiming().endTime !== Infinity)
            .map((a) => a.finished.catch(() => undefined)),
        ),
      );
      const [shown, topbar, nav] = [(await toast.boundingBox())!, await box(page, '.topbar'), await box(page, '.bottom-nav')];
      // At the top it covered Logout and, under a notch, sat in the status bar.
      expect(shown.y).toBeGreaterThanOrEqual(topbar.y + topbar.height);
      expect(shown.y + shown.height).toBeLessThanOrEqual(nav.y);
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});

describe('a direct load of a signed-in screen', () => {
  it('shows a loading indicator while the screen’s code arrives, not a blank page, and the router has nothing to warn about', async () => {
    const { token } = await newUser(stack, 'reload');
    const phone = await openPhone(stack, token, 'none');
    const { page } = phone;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The dashboard's own code is held back, as on a slow connection, until the test has looked.
    await page.route(/\/assets\/dashboard-page-[^/]*\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.goto(`${stack.siteUrl}/dashboard`, { waitUntil: 'commit' });
      await page.getByRole('status').filter({ hasText: 'Loading…' }).waitFor({ state: 'attached' });
      release();
      await page.getByRole('button', { name: 'Choose photos & files' }).waitFor();
      expect(await page.locator('.app-loading').count()).toBe(0);
      expect(phone.warnings.filter((w) => /HydrateFallback/.test(w))).toEqual([]);
      expect(phone.errors).toEqual([]);
    } finally {
      release();
      await phone.close();
    }
  });
});

describe('the admin filters', () => {
  it('show what is typed in regular weight, under their bold labels', async () => {
    const admin = await openPhone(stack, await stack.login(ADMIN.username, ADMIN.password), 'none', { width: 1280, height: 800 }, false);
    try {
      await admin.page.goto(`${stack.siteUrl}/admin/users`);
      const search = admin.page.getByRole('searchbox', { name: 'Search' });
      await search.waitFor();
      expect(await search.evaluate((el) => getComputedStyle(el).fontWeight)).toBe('400');
      expect(await search.evaluate((el) => getComputedStyle(el.closest('label')!).fontWeight)).toBe('600');
    } finally {
      await admin.close();
    }
  });
});

describe('the admin tables', () => {
  it('read as cards on a phone on its side and as a table on a desktop, no word broken inside either', async () => {
    const { token } = await newUser(stack, 'tables');
    await uploadViaApi(stack, token, 'holiday.png', await photoPng(), 'image/png');
    const adminToken = await stack.login(ADMIN.username, ADMIN.password);
    // Cells that must never break: at 716 px beside the sidebar All files' eight columns broke
    // dates into "12- / 05- / 20 / 26" and Invite Logs' badge into "Unclaime / d".
    const brokenCells = (page: Page, labels: string[]) =>
      page.locator(labels.map((l) => `.rtable td[data-label="${l}"]`).join(', ')).evaluateAll((cells) =>
        cells
          .filter((td) => {
            // A text that wraps has a box on each line it takes.
            const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
            for (let text = walker.nextNode(); text; text = walker.nextNode()) {
              const range = document.createRange();
              range.selectNodeContents(text);
              if (new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size > 1) return true;
            }
            return false;
          })
          .map((td) => `${td.getAttribute('data-label')}: ${td.textContent}`),
      );
    const stacked = (page: Page) => page.locator('.rtable tbody tr').first().evaluate((tr) => getComputedStyle(tr).display === 'block');
    for (const [viewport, cards] of [
      [{ width: 740, height: 360 }, true],
      [{ width: 1280, height: 800 }, false],
    ] as const) {
      const admin = await openPhone(stack, adminToken, 'none', viewport, cards);
      const { page } = admin;
      try {
        await page.goto(`${stack.siteUrl}/admin/uploaded`);
        await page.locator('.rtable tbody tr').first().waitFor();
        expect(await stacked(page)).toBe(cards);
        expect(await brokenCells(page, ['Uploader', 'Size', 'Uploaded'])).toEqual([]);
        await screenshot(page, `admin-tables-${viewport.width}-uploaded`);

        await page.goto(`${stack.siteUrl}/admin/invitelogs`);
        await page.locator('.rtable tbody tr').first().waitFor();
        expect(await stacked(page)).toBe(cards);
        expect(await brokenCells(page, ['State', 'Created'])).toEqual([]);
        await screenshot(page, `admin-tables-${viewport.width}-invitelogs`);
        expect(admin.errors).toEqual([]);
      } finally {
        await admin.close();
      }
    }
  });
});

describe('the admin section tabs on a phone', () => {
  it('stay where they are from screen to screen', async () => {
    const admin = await openPhone(stack, await stack.login(ADMIN.username, ADMIN.password), 'none', { width: 360, height: 740 });
    const { page } = admin;
    // The bold active tab was wider, so the row wrapped differently on each screen.
    const tabs = () =>
      page.locator('.section-tabs a').evaluateAll((links) =>
        links.map((a) => {
          const r = a.getBoundingClientRect();
          return `${a.textContent}@${Math.round(r.x)},${Math.round(r.y)},${Math.round(r.width)}`;
        }),
      );
    try {
      const seen: string[][] = [];
      for (const screen of ['uploaded', 'users', 'settings', 'invitelogs']) {
        await page.goto(`${stack.siteUrl}/admin/${screen}`);
        await page.locator(`.section-tabs a.active[href="/admin/${screen}"]`).waitFor();
        seen.push(await tabs());
      }
      expect(seen[0]!.length).toBeGreaterThan(1);
      for (const placed of seen.slice(1)) expect(placed).toEqual(seen[0]);
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});

describe('a file card on a phone', () => {
  it('keeps its buttons in place while "Copied to clipboard" shows', async () => {
    const { token } = await newUser(stack, 'copyjump');
    await uploadViaApi(stack, token, 'beach.png', await photoPng(), 'image/png');
    const phone = await openPhone(stack, token, 'none', { width: 360, height: 740 });
    const { page } = phone;
    const card = page.locator('.file-card').first();
    const buttons = () =>
      card.locator('.row button').evaluateAll((els) => els.map((b) => {
        const r = b.getBoundingClientRect();
        return `${b.textContent}@${Math.round(r.x)},${Math.round(r.y)}`;
      }));
    try {
      await page.goto(`${stack.siteUrl}/uploaded`);
      await card.getByRole('button', { name: 'Copy link' }).waitFor();
      const before = await buttons();
      await card.getByRole('button', { name: 'Copy link' }).click();
      await card.getByText('Copied to clipboard').waitFor();
      // Shown, the confirmation took a line in the row: Share and the rest went to a new line.
      expect(await buttons()).toEqual(before);
      await screenshot(page, 'phone-360-uploaded-copied');
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});
