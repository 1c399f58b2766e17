// The floor for ingest (issue 9): the least a Node server can do with the same upload and still
// keep it — the same multipart parser Stash is built on (@fastify/multipart wraps it) streaming
// the file part into a file through fs.WriteStream, with what any durable writer does on a slow
// disk: an fdatasync started in the background every 8 MiB written (so the disk works while bytes
// arrive) and a last one once the part has ended, before answering. No hash, no database, no
// checkpoint records, no lease: what is left is receiving and writing the bytes, which bounds
// every Node server on this machine (bench/README.md, "Ingest with fsync").
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Busboy from '@fastify/busboy';

const SYNC_EVERY = 8 * 1024 * 1024;
const [directory, port] = process.argv.slice(2);
let uploads = 0;

http
  .createServer((req, res) => {
    const answer = (status) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: status === 200 }));
    };
    if (req.method !== 'POST') return answer(200);
    const parser = new Busboy({ headers: req.headers, highWaterMark: 256 * 1024, fileHwm: 256 * 1024 });
    parser.on('file', (_field, file) => {
      const fd = fs.openSync(path.join(directory, `upload-${uploads++ % 2}`), 'w');
      const out = fs.createWriteStream('', { fd, autoClose: false, highWaterMark: 1024 * 1024 });
      let synced = 0;
      let syncing = null;
      const sync = () => new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
      file.on('data', () => {
        if (syncing || out.bytesWritten - synced < SYNC_EVERY) return;
        const upTo = out.bytesWritten;
        syncing = sync().then(() => (synced = upTo), () => {}).finally(() => (syncing = null));
      });
      const fail = () => {
        fs.closeSync(fd);
        answer(500);
      };
      out.on('error', fail);
      // Answered only once the bytes are on stable storage, as Stash answers.
      out.on('finish', () => {
        Promise.resolve(syncing)
          .then(sync)
          .then(() => {
            fs.closeSync(fd);
            answer(200);
          }, fail);
      });
      file.pipe(out);
    });
    req.pipe(parser);
  })
  .listen(Number(port), '127.0.0.1', () => console.log('listening'));
