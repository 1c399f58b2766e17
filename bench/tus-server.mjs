// The anchor for ingest and memory (issue 9): the tus reference server from the npm registry,
// storing on local disk, in its own process so its memory is measured apart.
import { Server } from '@tus/server';
import { FileStore } from '@tus/file-store';

const [directory, port] = process.argv.slice(2);
const server = new Server({ path: '/files', datastore: new FileStore({ directory }) });
server.listen({ host: '127.0.0.1', port: Number(port) }, () => console.log('listening'));
