// The floor for serving (issue 9): the least a Node server can do to answer a GET for a stored
// file — Node's own `http.createServer`; the file's descriptor kept open between requests (as
// nginx's open_file_cache keeps it) and its size and link count read on every request, so a
// file deleted by another process is seen at once, as Stash's `stat` sees it; a file of at most
// 64 KiB kept in memory once read, as Stash's files host keeps it; one `Range: bytes=…`
// honoured; the bytes read and written, a body of one piece in the same write as the headers.
// No router, no database, no rate limiter, no headers beyond the four a client needs.
// What separates it from nginx on the Range and 4 kB rows is Node's cost per connection and per
// request on this machine, and on the download row Node's copying of every byte through the
// process (no sendfile), which every Node server pays (bench/README.md).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [directory, port] = process.argv.slice(2);
// A range of up to 1 MiB (the Range row's) is one read and one write.
const PIECE = 1024 * 1024;
const SMALL = 64 * 1024;
/** Open descriptors by file name (the bench serves two files). */
const open = new Map();
/** Bytes of the small files by name. */
const bodies = new Map();
/** Read buffers kept between requests: a new MiB per read costs its page faults every time. */
const spare = [];

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` of a file of `size` bytes; null for none or anything else. */
function parseRange(header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header ?? '');
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') return { start: Math.max(0, size - Number(m[2])), end: size - 1 };
  return { start: Number(m[1]), end: m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1) };
}

/** The file's descriptor and size, or null when there is no such regular file (any more). */
function lookUp(name) {
  let fd = open.get(name);
  if (fd !== undefined) {
    const stat = fs.fstatSync(fd);
    if (stat.nlink > 0) return { fd, size: stat.size };
    fs.closeSync(fd);
    open.delete(name);
    bodies.delete(name);
  }
  try {
    fd = fs.openSync(path.join(directory, name), 'r');
  } catch {
    return null;
  }
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) {
    fs.closeSync(fd);
    return null;
  }
  open.set(name, fd);
  if (stat.size <= SMALL) bodies.set(name, fs.readFileSync(fd));
  return { fd, size: stat.size };
}

http
  .createServer((req, res) => {
    const name = path.basename(req.url ?? '');
    const file = lookUp(name);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    const range = parseRange(req.headers.range, file.size);
    const start = range?.start ?? 0;
    const end = range?.end ?? file.size - 1;
    res.writeHead(range ? 206 : 200, {
      'content-type': 'application/octet-stream',
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
      ...(range ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}),
    });
    const body = bodies.get(name);
    if (body) return void res.end(body.subarray(start, end + 1));
    // Pieces read one after the other, each written once read; the next read once the socket
    // has taken the last piece, into the buffer it gave back.
    let at = start;
    const next = () => {
      const buf = spare.pop() ?? Buffer.allocUnsafeSlow(PIECE);
      const giveBack = () => void spare.push(buf);
      fs.read(file.fd, buf, 0, Math.min(PIECE, end - at + 1), at, (err, n) => {
        if (err || n === 0) {
          giveBack();
          return void res.destroy();
        }
        at += n;
        const piece = buf.subarray(0, n);
        if (at > end) return void res.end(piece, giveBack);
        res.write(piece, () => {
          giveBack();
          next();
        });
      });
    };
    if (start > end) res.end();
    else next();
  })
  .listen(Number(port), '127.0.0.1');
