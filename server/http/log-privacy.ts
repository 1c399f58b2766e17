import type { FastifyRequest } from 'fastify';

/**
 * Design §11, issue 8 item 12: the privacy page promises that client IP addresses are not
 * logged, so the request serializer leaves them out (Fastify's default writes `remoteAddress`
 * and `remotePort` on every request line). `LOG_CLIENT_IPS=true` puts them back for an operator
 * who needs them and says so on their own privacy page.
 */
export function logSerializers(logClientIps: boolean) {
  return {
    req(request: FastifyRequest) {
      return {
        method: request.method,
        url: request.url,
        host: request.host,
        ...(logClientIps ? { remoteAddress: request.ip, remotePort: request.socket?.remotePort } : {}),
      };
    },
  };
}
