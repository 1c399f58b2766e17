/**
 * Design §6's rules for names and passwords, apart from common.ts's schemas so the sign-up and
 * settings forms can check them as they are submitted without the schema library
 * (contract/README.md): a typo costs no round trip, and the person reads a sentence instead of
 * the API's "Field 'newUsername' must be at least 3 characters."
 */
export const USERNAME_MIN = 3;
export const USERNAME_MAX = 32;
export const USERNAME_PATTERN = '^[A-Za-z0-9_.-]+$';
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

export const USERNAME_RULE_TEXT = `Usernames are ${USERNAME_MIN} to ${USERNAME_MAX} letters, digits, _, . or -.`;
export const PASSWORD_RULE_TEXT = `Passwords are ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`;

/** What is wrong with `name` as a username, in words; null when the server will take it. */
export function usernameProblem(name: string): string | null {
  const ok = name.length >= USERNAME_MIN && name.length <= USERNAME_MAX && new RegExp(USERNAME_PATTERN).test(name);
  return ok ? null : USERNAME_RULE_TEXT;
}

/** What is wrong with `password` as a new password, in words; null when the server will take it. */
export function passwordProblem(password: string): string | null {
  return password.length >= PASSWORD_MIN && password.length <= PASSWORD_MAX ? null : PASSWORD_RULE_TEXT;
}
