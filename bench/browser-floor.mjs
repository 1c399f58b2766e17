// The floor for the browser upload (issue 9): the least a browser can do to send a picked file
// the way Stash's protocol does — the same Chromium posting the same 80 MB slices of the picked
// File, one after the other, each as a multipart form with the protocol's text fields before the
// file part — into a Node server that counts the body's bytes and throws them away. No hashing
// in the page, no IndexedDB, no worker, no database, no disk: what is left is Chromium's own
// upload path (renderer → blob system → network service → socket), which curl does not have.
// GET / is the page with the file input; POST /sink answers with the bytes it read.
import http from 'node:http';

const [, port] = process.argv.slice(2);

const PAGE = `<!doctype html><meta charset="utf-8"><title>browser floor</title>
<label>Choose files to upload <input type="file"></label>
<script>
// fields and names (the index's and the file's field) come from contract/upload-fields.ts.
window.sendInSlices = async (chunkSize, fields, names) => {
  const file = document.querySelector('input').files[0];
  const total = Math.max(1, Math.ceil(file.size / chunkSize));
  let received = 0;
  for (let index = 0; index < total; index++) {
    const form = new FormData();
    for (const [k, v] of fields) form.append(k, v);
    form.append(names.index, String(index));
    form.append(names.file, file.slice(index * chunkSize, Math.min(file.size, (index + 1) * chunkSize)), file.name);
    // XHR, as the app's transport sends a chunk (its upload progress is listened to).
    received += await new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', '/sink');
      xhr.upload.onprogress = () => {};
      xhr.onload = () => (xhr.status === 200 ? resolve(Number(xhr.responseText)) : reject(new Error(String(xhr.status))));
      xhr.onerror = () => reject(new Error('network error'));
      xhr.send(form);
    });
  }
  return received;
};
</script>`;

http
  .createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/sink') {
      let bytes = 0;
      req.on('data', (piece) => (bytes += piece.length));
      req.on('end', () => res.end(String(bytes)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  })
  .listen(Number(port), '127.0.0.1');
