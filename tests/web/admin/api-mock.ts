import { vi } from 'vitest';
import { ApiError } from '../../../src/lib/api-client.ts';

type Handler = (body: Record<string, unknown>) => unknown;

/**
 * Answers for the mocked `call`, by path. A handler may throw an ApiError to play a refusal.
 * Every call is recorded so a test can check what the screen asked the server.
 */
export function fakeServer(handlers: Record<string, Handler>) {
  const calls: { path: string; body: Record<string, unknown> }[] = [];
  const impl = async (path: string, body: Record<string, unknown>) => {
    calls.push({ path, body });
    const h = handlers[path];
    if (!h) throw new ApiError(`no fake for ${path}`, { status: 404, fromServer: true, success: false });
    return h(body);
  };
  return { calls, impl: vi.fn(impl) };
}

export function refusal(status: number, message: string, fromServer = true): ApiError {
  return new ApiError(message, { status, fromServer, success: false });
}
