import { Type, type Static, type TSchema } from 'typebox';
import { PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX, USERNAME_MIN, USERNAME_PATTERN } from './account-rules.ts';

/**
 * One endpoint of spec §7: its path, its request body and its success answer. The server
 * validates with `body`; the web app imports the Static<> types (import type only).
 */
export interface Endpoint<B extends TSchema, R extends TSchema, P extends string = string> {
  path: P;
  body: B;
  response: R;
}

export function endpoint<P extends string, B extends TSchema, R extends TSchema>(path: P, body: B, response: R): Endpoint<B, R, P> {
  return { path, body, response };
}

export type BodyOf<E> = E extends Endpoint<infer B, TSchema, string> ? Static<B> : never;
export type ResponseOf<E> = E extends Endpoint<TSchema, infer R, string> ? Static<R> : never;
/** Lets the web app name an endpoint by type alone: `call<typeof adminUsers>('/api/v1/admin/get/users', …)`. */
export type PathOf<E> = E extends Endpoint<TSchema, TSchema, infer P> ? P : never;

/** Every body is closed: unknown fields are refused with a 400 (design §5). */
export function Body<P extends Record<string, TSchema>>(properties: P) {
  return Type.Object(properties, { additionalProperties: false });
}

// Spec §3: the token travels in the body; design §5 also accepts `Authorization: Bearer`.
export const Token = Type.Optional(Type.String({ minLength: 1, maxLength: 512 }));

/** Design §6: 3–32 letters, digits, `_`, `.`, `-` (account-rules.ts, shared with the forms). */
export const Username = Type.String({ minLength: USERNAME_MIN, maxLength: USERNAME_MAX, pattern: USERNAME_PATTERN });
/** Design §6: 8–256 characters. */
export const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
export const Id = Type.String({ minLength: 1, maxLength: 64 });
export const Page = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 }));
/** Design §9: pageSize/limit at most 100. */
export const PageSize = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }));
export const Filter = Type.Optional(Type.String({ maxLength: 256 }));

export const Ok = Type.Literal(true);

export const SuccessMessage = Type.Object({ success: Ok, message: Type.String() });
export const SuccessOnly = Type.Object({ success: Ok, message: Type.Optional(Type.String()) });

/** Design §5: every failure carries a readable `error`. Login nests it (spec §7 reads error.error). */
export const ErrorBody = Type.Object({
  success: Type.Literal(false),
  error: Type.Union([Type.String(), Type.Object({ error: Type.String() })]),
  retry: Type.Optional(Type.Boolean()),
});
export type ErrorBody = Static<typeof ErrorBody>;

export const RoleName = Type.Union([
  Type.Literal('default'),
  Type.Literal('trusted'),
  Type.Literal('mod'),
  Type.Literal('admin'),
]);
export type RoleName = Static<typeof RoleName>;

/** Roles an admin may hand out (spec §4: admin is not selectable). */
export const AssignableRole = Type.Union([Type.Literal('default'), Type.Literal('trusted'), Type.Literal('mod')]);

export const ClaimedFilter = Type.Optional(
  Type.Union([Type.Literal('all'), Type.Literal('claimed'), Type.Literal('unclaimed'), Type.Literal('')]),
);

/** Spec §3 Invite; createdBy/claimedBy are usernames (design §9), claimedBy null while unclaimed. */
export const Invite = Type.Object({
  _id: Type.String(),
  inviteKey: Type.String(),
  createdBy: Type.Union([Type.String(), Type.Null()]),
  claimed: Type.Boolean(),
  claimedBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.Number(),
});
export type Invite = Static<typeof Invite>;
