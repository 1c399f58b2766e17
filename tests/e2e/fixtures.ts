/** A valid 1×1 PNG: the server decides types by bytes (design §7), so a fake one would be refused. */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let counter = 0;
/** Usernames unique within one server run (design §6: 3–32 letters, digits, _ . -). */
export function uniqueName(prefix: string): string {
  counter += 1;
  // The unique part is kept whole; only the prefix is shortened to fit.
  const suffix = `${Date.now().toString(36)}${counter}`;
  return `${prefix.slice(0, 31 - suffix.length)}-${suffix}`;
}

export const USER_PASSWORD = 'correct-horse-battery';
