import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (a Content-Length that is not a
 * number or is followed by stray bytes, broken chunked encoding, headers too large, a client too
 * slow). Fastify's default answer has its own shape; design §5 wants `{ success: false, error }`
 * on every answer, so clients can read the message the same way.
 */
export function answerClientError(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'The request took too long to arrive.']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'The request headers are too large.']
        : [400, 'Bad Request', 'The request is not valid HTTP.'];
  this.log.trace({ err }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify({ success: false, error: message });
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/**
 * Fastify's router refuses some addresses before any route or error handler runs: a broken
 * percent-escape (`/%zz`) or a path segment over the parameter limit. Same shape as every
 * other refusal (design §5), and the address is not echoed back.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'The address is too long.'
      : error.code === 'FST_ERR_BAD_URL'
        ? 'The address is not valid.'
        : 'The request could not be routed.';
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  void reply.status(status).send({ success: false, error: message });
}
