import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The shell the site serves for every route of the app (spec §2), as a build would make it. */
export const STAND_IN_SHELL = '<!doctype html><title>Stash</title><div id="root"></div>';

/**
 * A stand-in for the web app's build (`dist/`) in a fresh temporary folder: the shell, and the
 * files named (paths relative to the folder, `/` between parts). Site tests serve it so they need
 * no `vite build`; remove the folder with `fs.rmSync(dir, { recursive: true, force: true })`.
 */
export function standInBuild(files: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-site-'));
  for (const [name, body] of Object.entries({ 'index.html': STAND_IN_SHELL, ...files })) {
    const file = path.join(dir, ...name.split('/'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, body);
  }
  return dir;
}
