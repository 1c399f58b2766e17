import { passwordProblem, usernameProblem } from '../../../contract/account-rules.ts';

/** Spec §5 rules for the sign-in forms, word for word. */
export const MSG_LOGIN_CAPTCHA = 'You must verify the captcha';
export const MSG_REGISTER_CAPTCHA = 'Please verify the captcha.';
export const MSG_PASSWORDS_DIFFER = 'Passwords do not match';
export const MSG_FILL_ALL = 'Please fill in all fields.';
export const MSG_AGREE = 'Please agree to our privacy policy and TOS';

export interface RegisterInput {
  username: string;
  password: string;
  confirmPassword: string;
  inviteKey: string;
  agreed: boolean;
}

/**
 * The register form's own checks before any request. The spec leaves open whether confirm is
 * compared; we compare it (a typo in a new password locks the user out), see src/README.md.
 */
export function validateRegister(input: RegisterInput): string | null {
  if (!input.agreed) return MSG_AGREE;
  if (!input.username.trim() || !input.password || !input.confirmPassword || !input.inviteKey.trim()) return MSG_FILL_ALL;
  if (input.password !== input.confirmPassword) return MSG_PASSWORDS_DIFFER;
  return usernameProblem(input.username.trim()) ?? passwordProblem(input.password);
}
