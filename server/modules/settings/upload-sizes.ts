import type { Deps } from '../../deps.ts';
import { badRequest } from '../../http/errors.ts';
import { lockSettings, readSettings, writeSetting } from './settings.repository.ts';
import { readLimits, readSiteSettings } from './settings.service.ts';

/** The two size settings that bound one upload together, in MB (design §6). */
export interface UploadSizes {
  max_file_size: number;
  max_unfinished_size: number;
}
export type UploadSizeKey = keyof UploadSizes;

/**
 * Why `sizes` would leave uploads that can never succeed, or null. A file's bytes count against
 * max unfinished upload size until it is listed (files/upload-bounds.ts): a file larger than
 * that bound is refused at it even alone, with a "finish or cancel an upload first" that
 * misleads. A file up to the bound always fits alone: its chunk on its way counts as what it
 * will hold, so a bound below one 80 MB chunk (spec §9) is fine for files that small.
 */
export function uploadSizesProblem(sizes: UploadSizes): string | null {
  const { max_file_size: file, max_unfinished_size: unfinished } = sizes;
  if (file > unfinished) {
    return `Max file size (${file} MB) cannot be larger than max unfinished upload size (${unfinished} MB): files between the two could never be uploaded.`;
  }
  return null;
}

/**
 * Saves max_file_size or max_unfinished_size, refused with 400 and nothing written when the
 * pair it leaves has a problem (uploadSizesProblem). The check reads the stored other value
 * in the transaction that writes, under the settings lock, not from the cache: two saves at
 * once (one raising max file size, one lowering the unfinished bound) cannot each pass
 * against the value the other is replacing.
 */
export async function saveUploadSize(deps: Pick<Deps, 'db' | 'dialect' | 'settings'>, key: UploadSizeKey, value: number): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await lockSettings(trx, deps.dialect);
    const stored = await readSettings(trx);
    const sizes: UploadSizes = { max_file_size: readSiteSettings(stored).max_file_size, max_unfinished_size: readLimits(stored).max_unfinished_size };
    sizes[key] = value;
    const problem = uploadSizesProblem(sizes);
    if (problem) throw badRequest(problem);
    await writeSetting(trx, key, String(value));
  });
  deps.settings.invalidate();
}
