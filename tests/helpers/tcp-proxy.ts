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
  /**
   * While on, what servers send is kept back (and a server's close with it), then delivered in
   * order when turned off: a client that has not yet heard what the server already said (a
   * connection ended by the server whose end is still on its way).
   */
  hold(on: boolean): void;
  /** Bytes clients sent since hold(true): a request is on its way once this grows. */
  sentWhileHeld(): number;
  /**
   * While holding, lets through what was kept back for the connections whose clients sent
   * something since hold(true), and everything that follows on them; the others stay held (of
   * several ended connections, the one a request was sent on hears of it first).
   */
  releaseAsked(): void;
  /** What clients sent into the silence, piece by piece. */
  unanswered: Buffer[];
  /** Connections clients opened through the relay so far. */
  opened(): number;
  /**
   * The answer to each request whose start matches `request` (anchor it: ^POST …) is held back `ms` (a store
   * slow to answer that one call) or, with `ms` null, lost: its connection is cut as the answer
   * comes, after the server has done the work. `null` turns it off.
   */
  answers(rule: { request: RegExp; ms: number | null } | null): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const unanswered: Buffer[] = [];
  let silent = false;
  let opened = 0;
  let answerRule: { request: RegExp; ms: number | null } | null = null;
  // Per connection while hold(true) is on: what its server sent and whether it then closed (kept
  // back until released), what its client sent, and whether it was let through.
  const holding = new Map<net.Socket, { data: Buffer[]; closed: boolean; sent: number; released: boolean; deliver: () => void }>();
  let held = false;
  let server: net.Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        opened += 1;
        sockets.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        // The rule met by the request now on this connection, and the answer held back for it.
        let pending: { ms: number | null; held: Buffer[] | null; closed?: boolean } | null = null;
        client.on('error', drop).on('close', drop);
        // A server that closes after answering (moto does) has its held answer delivered first.
        const keeping = () => (held || holding.has(client)) && !holding.get(client)?.released;
        const upstreamGone = () => {
          if (keeping()) keptFor().closed = true;
          else if (pending?.held) pending.closed = true;
          else drop();
        };
        upstream.on('error', upstreamGone).on('close', upstreamGone);
        let dead = silent;
        const answering = (data: Buffer): boolean => {
          if (!pending) return false;
          const { ms } = pending;
          if (ms === null) {
            drop();
            return true;
          }
          if (pending.held) {
            pending.held.push(data);
            return true;
          }
          const hold = (pending = { ...pending, held: [data] });
          setTimeout(() => {
            pending = null;
            for (const d of hold.held) client.write(d);
            if (hold.closed) client.end(drop);
          }, ms);
          return true;
        };
        const relay = (from: net.Socket, to: net.Socket, onSilenced: (data: Buffer) => void) =>
          from.on('data', (data: Buffer) => {
            dead ||= silent;
            if (from === client && held) keptFor().sent += data.length;
            if (dead) return onSilenced(data);
            if (from === client && answerRule?.request.test(data.subarray(0, 512).toString('latin1'))) pending = { ms: answerRule.ms, held: null };
            if (from === upstream && answering(data)) return;
            if (from === upstream && keeping()) return void keptFor().data.push(data);
            // Backpressure as pipe() would: a large body is not buffered whole here.
            if (!to.write(data)) {
              from.pause();
              to.once('drain', () => from.resume());
            }
          });
        const keptFor = () => {
          let kept = holding.get(client);
          if (!kept) {
            const entry = { data: [] as Buffer[], closed: false, sent: 0, released: false, deliver: () => {} };
            entry.deliver = () => {
              entry.released = true;
              for (const d of entry.data.splice(0)) client.write(d);
              if (entry.closed) client.end(drop);
            };
            holding.set(client, (kept = entry));
          }
          return kept;
        };
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
    answers: (rule) => {
      answerRule = rule;
    },
    hold: (on) => {
      held = on;
      if (on) return;
      const kept = [...holding.values()];
      holding.clear();
      for (const k of kept) if (!k.released) k.deliver();
    },
    sentWhileHeld: () => [...holding.values()].reduce((n, k) => n + k.sent, 0),
    releaseAsked: () => {
      for (const k of holding.values()) if (k.sent > 0 && !k.released) k.deliver();
    },
    unanswered,
    opened: () => opened,
    close: down,
  };
}
