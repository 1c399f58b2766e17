/**
 * An answer a client caused (design §5): its status and a message a person can read. Thrown
 * anywhere below a route; the one error handler turns it into `{ success: false, error }`.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** Extra fields for the body (e.g. `retry`), or a replacement for `error` (login's nesting). */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (msg: string, extra?: Record<string, unknown>) => new HttpError(400, msg, extra);
export const unauthorized = (msg = 'You must be signed in.') => new HttpError(401, msg);
export const forbidden = (msg = 'You are not authorized to access this resource.') => new HttpError(403, msg);
export const notFound = (msg = 'Not found.') => new HttpError(404, msg);
export const conflict = (msg: string) => new HttpError(409, msg);
export const tooLarge = (msg: string) => new HttpError(413, msg);
export const unsupportedType = (msg: string) => new HttpError(415, msg);
export const unprocessable = (msg: string, extra?: Record<string, unknown>) => new HttpError(422, msg, extra);
export const unavailable = (msg: string) => new HttpError(503, msg);

export const MESSAGES = {
  maintenance: 'The site is under maintenance.',
  uploadsOff: 'Uploading is currently disabled.',
  notAuthorized: 'You are not authorized to access this resource.',
  banned: 'Your account has been banned.',
  sessionExpired: 'Your session has expired. Please sign in again.',
  signInRequired: 'You must be signed in.',
} as const;
