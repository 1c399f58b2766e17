/** Spec §5: the value must parse as a URL; only web addresses make sense to fetch (design §7). */
export const MSG_BAD_URL = 'Please enter a valid URL.';
export const MSG_URL_UPLOAD_FAILED = 'Error uploading via URL';

export function isValidUploadUrl(value: string): boolean {
  try {
    const u = new URL(value.trim());
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
