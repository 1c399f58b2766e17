import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import type { Stack } from './harness.ts';

/** Registers through the form of spec §2 /register; captcha is off in the suite (design §4). */
export async function registerViaUi(page: Page, stack: Stack, username: string, password: string, inviteKey: string): Promise<void> {
  await page.goto(`${stack.siteUrl}/register`);
  await page.getByLabel('Username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Confirm password', { exact: true }).fill(password);
  await page.getByLabel('Invite code', { exact: true }).fill(inviteKey);
  const submit = page.locator('form button[type="submit"]');
  // Spec §2: disabled and labelled so until the terms box is ticked.
  await expect.poll(() => submit.textContent()).toContain('Please agree to our privacy policy and TOS');
  expect(await submit.isDisabled()).toBe(true);
  await page.getByRole('checkbox').check();
  await submit.click();
  await page.getByText('Success: Account has been created! Redirecting...').waitFor();
  await page.waitForURL('**/login');
}

export async function loginViaUi(page: Page, stack: Stack, username: string, password: string): Promise<void> {
  if (!page.url().endsWith('/login')) await page.goto(`${stack.siteUrl}/login`);
  await page.getByLabel('Username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.locator('form button[type="submit"]').click();
  await page.waitForURL('**/dashboard');
}

/** A user made through the API, for tests whose subject is not registration. */
export async function registerViaApi(stack: Stack, username: string, password: string): Promise<void> {
  const invitekey = await stack.newInvite();
  const res = await stack.api('/api/v1/auth/register', { username, password, invitekey });
  if (res.status >= 300) throw new Error(`register ${username}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** One whole file in one multipart request (design §7), the way ShareX or curl sends it. */
export async function uploadViaApi(stack: Stack, token: string, name: string, bytes: Buffer, type: string): Promise<{ url: string }> {
  const form = new FormData();
  form.append('token', token);
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
  const res = await fetch(`${stack.apiUrl}/api/v1/files/upload`, { method: 'POST', body: form });
  const body = (await res.json()) as { url?: string };
  if (!res.ok || !body.url) throw new Error(`upload ${name}: ${res.status} ${JSON.stringify(body)}`);
  return { url: body.url };
}
