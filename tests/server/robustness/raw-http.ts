import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface RawAnswer {
  /** 0 when the server closed without answering (a body it could never finish reading). */
  status: number;
  body: string;
}

/**
 * Writes bytes to a server exactly as given, so a test can send what no HTTP client would: a
 * Content-Length that lies, a body cut off midway. Waits for the answer or `waitMs`.
 */
export function rawRequest(url: string, head: string, body: Buffer | string, options: { endAfterWrite?: boolean; waitMs?: number } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const parts: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(parts).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: m ? Number(m[1]) : 0, body: split >= 0 ? text.slice(split + 4) : '' });
    };
    const timer = setTimeout(finish, options.waitMs ?? 2000);
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', finish);
    socket.write(Buffer.concat([Buffer.from(head.replace(/\r?\n/g, '\r\n')), Buffer.isBuffer(body) ? body : Buffer.from(body)]));
    if (options.endAfterWrite) socket.end();
  });
}

/** Bytes of every stored object under DATA_DIR/storage/files. */
export function storedBytes(dataDir: string): number {
  const root = path.join(dataDir, 'storage', 'files');
  if (!fs.existsSync(root)) return 0;
  let total = 0;
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}
