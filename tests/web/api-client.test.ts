import { describe, expect, it } from 'vitest';
import { AxiosError, AxiosHeaders } from 'axios';
import { errorMessage, serverText, toApiError } from '../../src/lib/api-client.ts';

function axiosFailure(status: number, data: unknown, code = 'ERR_BAD_REQUEST', headers: Record<string, string> = {}) {
  const config = { headers: new AxiosHeaders() };
  return new AxiosError('Request failed', code, config, null, { status, statusText: '', headers: AxiosHeaders.from(headers), config, data });
}

describe('server error text (spec §8: error as text, or an object with error or message, or message)', () => {
  it('reads every shape', () => {
    expect(serverText({ success: false, error: 'plain' })).toBe('plain');
    expect(serverText({ success: false, error: { error: 'nested' } })).toBe('nested');
    expect(serverText({ success: false, error: { message: 'nested message' } })).toBe('nested message');
    expect(serverText({ success: false, message: 'top message' })).toBe('top message');
    expect(serverText('<html>')).toBeUndefined();
  });

  it("uses the server's words when given, else the screen's fallback", () => {
    expect(errorMessage(axiosFailure(401, { success: false, error: { error: 'Invalid username or password' } }), 'x')).toBe(
      'Invalid username or password',
    );
    expect(errorMessage(axiosFailure(502, '<html>bad gateway</html>', 'ERR_BAD_RESPONSE'), 'An internal error occurred.')).toBe(
      'An internal error occurred.',
    );
  });

  it('keeps the status, the code and whether the server said success: false', () => {
    const e = toApiError(axiosFailure(401, { success: false, error: 'Invalid session' }));
    expect(e).toMatchObject({ status: 401, success: false, fromServer: true, message: 'Invalid session' });
    const timeout = toApiError(new AxiosError('timeout of 1ms exceeded', 'ECONNABORTED'));
    expect(timeout).toMatchObject({ status: 0, code: 'ECONNABORTED', fromServer: false });
  });

  it("keeps a 503's Retry-After, so a screen asks again no sooner than the server said", () => {
    const body = { success: false, error: 'The database is unavailable right now. Please try again in a moment.' };
    expect(toApiError(axiosFailure(503, body, 'ERR_BAD_RESPONSE', { 'Retry-After': '5' }))).toMatchObject({ status: 503, retryAfter: '5', fromServer: true });
    expect(toApiError(axiosFailure(503, body, 'ERR_BAD_RESPONSE')).retryAfter).toBeUndefined();
  });
});
