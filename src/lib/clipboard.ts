/** Copies text, falling back to a hidden textarea where the async clipboard is refused (http, old browsers). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // fall through to the legacy path
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('Copy was refused by the browser');
  } finally {
    area.remove();
  }
}

/** Spec §3: the share link is the files host followed by the last path segment of the url. */
export function shareLink(filesUrl: string, url: string): string {
  const last = url.split('?')[0]!.split('/').filter(Boolean).pop() ?? '';
  return `${filesUrl.replace(/\/+$/, '')}/${last}`;
}
