import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * How long a connection is still read from after an answer that went out before its request's
 * body had all arrived. A client reads an answer as it comes: this only has to outlast the trip
 * of the answer to it (Go's server waits 500 ms; nginx's lingering close up to 30 s).
 */
export const LINGER_MS = 2_000;

/**
 * An answer sent before the request's body was all read: an upload refused midway (a bad token,
 * a file over the limit, a wrong chunk index), a JSON body over `bodyLimit`. Such an answer
 * closes the connection (`Connection: close`: the rest of the body is not worth reading), but
 * Node closes it at once, and a socket closed with bytes still unread is reset by the kernel.
 * A client still sending then hears of the reset before it has read the answer: nginx in
 * front (README) answered 502 Bad Gateway instead of every such 4xx, and a browser may report a
 * failed connection. So the connection is torn down as RFC 9112 §9.6 says servers do: the
 * answer, then this side closed for writing, and the rest of the body read and dropped until the
 * client closes its side, the body ends, or LINGER_MS have passed; only then is it cut.
 */
export function closeGentlyAfterEarlyAnswers(app: FastifyInstance, lingerMs = LINGER_MS): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) {
      void reply.header('connection', 'close');
      lingerOnClose(request.raw, lingerMs);
    }
    done(null, payload);
  });
}

/**
 * Node ends a `Connection: close` answer's socket with `destroySoon()` (its server's
 * resOnFinish): end, then destroy as soon as the end is written. For this one socket that
 * becomes the gentle close above (tests/server/scale/behind-nginx.test.ts fails if Node
 * stops calling it: nginx answers 502 again).
 */
function lingerOnClose(req: IncomingMessage, lingerMs: number): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (typeof socket.destroySoon !== 'function') return;
  socket.destroySoon = () => {
    // The body's bytes still coming go nowhere: the parser hands them to the request, which
    // nobody reads any more.
    req.unpipe();
    req.removeAllListeners('data');
    req.resume();
    const cut = () => socket.destroy();
    const timer = setTimeout(cut, lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.end(() => {
      // The answer and this side's end are written. Once the client has closed its side or the
      // body has all come, nothing is left unread to reset the connection with.
      if (req.complete || socket.readableEnded) return cut();
      socket.once('end', cut);
      req.once('end', cut);
    });
  };
}
