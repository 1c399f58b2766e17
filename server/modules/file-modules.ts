import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { registerFilesRoutes } from './files/files.routes.ts';
import { registerUploadRoute } from './files/upload.routes.ts';

/** Uploads, listings, deletes and file statistics (spec §7 Files and the admin file calls). */
export async function registerFileModules(app: FastifyInstance, deps: Deps): Promise<void> {
  // Encapsulated: the multipart parser exists only for the upload route, so every other call
  // keeps refusing multipart bodies as a wrong content type (design §5).
  await app.register(async (scope) => {
    await registerUploadRoute(scope, deps);
  });
  registerFilesRoutes(app, deps);
}
