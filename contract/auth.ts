import { Type } from 'typebox';
import { Body, Id, Ok, Password, RoleName, SuccessMessage, SuccessOnly, Token, Username, endpoint } from './common.ts';

const CaptchaType = Type.Optional(Type.Union([Type.Literal('hcaptcha'), Type.Literal('turnstile')]));
const Captcha = Type.Optional(Type.String({ maxLength: 8192 }));

/** Spec §7's `{ _id, key }`, plus when it was made (seconds, design §9's times), so a person can tell their keys apart. */
export const ApiKey = Type.Object({ _id: Type.String(), key: Type.String(), createdAt: Type.Integer() });

export const authData = endpoint(
  '/api/v1/auth/data',
  Body({ token: Token }),
  Type.Object({
    success: Ok,
    user: Type.Object({ _id: Type.String(), username: Type.String(), role: RoleName }),
    maintenance: Type.Boolean(),
  }),
);

// Login takes any existing username, so only lengths are checked here (the rules apply at creation).
export const authLogin = endpoint(
  '/api/v1/auth/login',
  Body({
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
    captcha: Captcha,
    captchaType: CaptchaType,
  }),
  Type.Object({ success: Ok, token: Type.String() }),
);

export const authRegister = endpoint(
  '/api/v1/auth/register',
  Body({
    username: Username,
    password: Password,
    invitekey: Type.String({ minLength: 1, maxLength: 128 }),
    captcha: Captcha,
    captchaType: CaptchaType,
  }),
  SuccessMessage,
);

export const authLogout = endpoint('/api/v1/auth/logout', Body({ token: Token }), SuccessOnly);

export const authApiKeys = endpoint(
  '/api/v1/auth/apikeys',
  Body({ token: Token }),
  Type.Object({ success: Ok, apiKeys: Type.Array(ApiKey) }),
);

export const authApiKeysGenerate = endpoint(
  '/api/v1/auth/apikeys/generate',
  Body({ token: Token }),
  Type.Object({ success: Ok, apiKey: ApiKey }),
);

/** `apiKey` may be the key itself or its `_id`; either way only the caller's own key is revoked. */
export const authApiKeysRevoke = endpoint(
  '/api/v1/auth/apikeys/revoke',
  Body({ token: Token, apiKey: Type.String({ minLength: 1, maxLength: 128 }) }),
  SuccessOnly,
);

export { Id };
