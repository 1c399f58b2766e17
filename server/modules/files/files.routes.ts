import type { FastifyInstance } from 'fastify';
import { adminAllStats, adminDeleteFile, adminUploaded } from '../../../contract/admin.ts';
import { filesDelete, filesUploadCancel, filesUploadStatus, filesUploadUrl, filesUploaded } from '../../../contract/files.ts';
import { utilsFileSize, utilsUserStats } from '../../../contract/utils.ts';
import type { Deps } from '../../deps.ts';
import { post } from '../../http/route.ts';
import { deleteFile, listFilePage, siteStats, userStats } from './files.service.ts';
import { cancelUpload, uploadStatus } from './upload.service.ts';
import { uploadFromUrl } from './url-upload.service.ts';

/** The JSON file calls of spec §7 and design §7; API keys open only uploads and own files (design §6). */
export function registerFilesRoutes(app: FastifyInstance, deps: Deps): void {
  post(app, deps, filesUploadStatus, { access: 'user', apiKey: true }, ({ caller, body }) => uploadStatus(deps, caller, body.uploadId));

  post(app, deps, filesUploadCancel, { access: 'user', apiKey: true }, async ({ caller, body }) => {
    await cancelUpload(deps, caller, body.uploadId);
    return { success: true as const };
  });

  post(app, deps, filesUploadUrl, { access: 'user', apiKey: true }, ({ caller, body }) => uploadFromUrl(deps, caller, body.url));

  post(app, deps, filesUploaded, { access: 'user', apiKey: true }, ({ caller, body }) =>
    listFilePage(deps, body, { userId: caller.id, originalName: body.filters?.name }),
  );

  post(app, deps, filesDelete, { access: 'user', apiKey: true }, async ({ caller, body, request }) => {
    await deleteFile(deps, caller, body.filePath, false, request.log);
    return { success: true as const, message: 'File deleted.' };
  });

  post(app, deps, adminUploaded, { access: 'staff' }, ({ body }) =>
    listFilePage(deps, body, {
      username: body.filters?.username,
      originalName: body.filters?.originalName,
      actualName: body.filters?.actualName,
    }),
  );

  post(app, deps, adminDeleteFile, { access: 'staff' }, async ({ caller, body, request }) => {
    await deleteFile(deps, caller, body.filePath, true, request.log);
    return { success: true as const, message: 'File deleted.' };
  });

  post(app, deps, adminAllStats, { access: 'admin' }, async () => ({ success: true as const, stats: await siteStats(deps) }));

  post(app, deps, utilsFileSize, { access: 'user' }, async () => ({
    success: true as const,
    maxFileSize: (await deps.settings.get()).max_file_size,
  }));

  post(app, deps, utilsUserStats, { access: 'user' }, async ({ caller }) => ({ success: true as const, stats: await userStats(deps, caller) }));
}
