import net from 'node:net';

/**
 * A loopback TCP relay to a real server that a test can take away and bring back on the same
 * port, or silence: a store or Redis that "goes away" or hangs without mocking it (fault
 * injection, loopback only).
 */
export interface TcpProxy {
  url: string;
  /** Closes the port and cuts every open connection. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /**
   * While on, connections take bytes and answer nothing, and every connection used or opened
   * meanwhile stays dead after (a path through a NAT or firewall that forgot the flow, or a
   * server that hangs); connections opened after it is turned off work.
   */
  silence(on: boolean): void;
  /** What clients sent into the silence, piece by piece. */
  unanswered: Buffer[];
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const unanswered: Buffer[] = [];
  let silent = false;
  let server: net.Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        sockets.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        let dead = silent;
        const relay = (from: net.Socket, to: net.Socket, onSilenced: (data: Buffer) => void) =>
          from.on('data', (data: Buffer) => {
            dead ||= silent;
            if (dead) return onSilenced(data);
            // Backpressure as pipe() would: a large body is not buffered whole here.
            if (!to.write(data)) {
              from.pause();
              to.once('drain', () => from.resume());
            }
          });
        relay(client, upstream, (data) => unanswered.push(data));
        relay(upstream, client, () => {});
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as net.AddressInfo).port;
        server = s;
        resolve();
      });
    });
  const down = async () => {
    const s = server;
    server = null;
    for (const sock of sockets) sock.destroy();
    sockets.clear();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    down,
    up: listen,
    silence: (on) => {
      silent = on;
    },
    unanswered,
    close: down,
  };
}
