// The floor for ingest (issue 9): the least a Node server can do with the same upload and still
// keep it — the same multipart parser Stash is built on (@fastify/multipart wraps it) streaming
// the file part into a file through fs.WriteStream, one fdatasync once the part has ended. No
// hash, no database, no checkpoints, no lease: what is left is receiving and writing the bytes,
// which bounds every Node server on this machine (bench/README.md, "Ingest with fsync").
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Busboy from '@fastify/busboy';

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
      const target = path.join(directory, `upload-${uploads++ % 2}`);
      const out = fs.createWriteStream(target, { highWaterMark: 1024 * 1024 });
      out.on('error', () => answer(500));
      // Answered only once the bytes are on stable storage, as Stash answers.
      out.on('finish', () => {
        const fd = fs.openSync(target, 'r+');
        fs.fdatasync(fd, (err) => {
          fs.closeSync(fd);
          answer(err ? 500 : 200);
        });
      });
      file.pipe(out);
    });
    req.pipe(parser);
  })
  .listen(Number(port), '127.0.0.1', () => console.log('listening'));
