import type { Mock } from 'vitest';
import { ApiError } from '../../../src/lib/api-client.ts';

/**
 * A stand-in for the HTTP layer in component tests only (the real-server suite is e2e): each
 * test says what a path answers. Use with
 *   vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig()), call: apiCall }))
 * where apiCall comes from vi.hoisted(() => vi.fn()).
 */
export type Handler = (body: Record<string, unknown>) => unknown;

export function routeCalls(mock: Mock, handlers: Record<string, Handler>) {
  mock.mockImplementation(async (path: string, body: Record<string, unknown>) => {
    const h = handlers[path];
    if (!h) throw new ApiError(`No handler for ${path}`, { status: 0, fromServer: false });
    return h(body);
  });
}

/** What a failed server answer looks like once the client has read it. */
export function serverError(status: number, message: string): ApiError {
  return new ApiError(message, { status, fromServer: true, success: false });
}
