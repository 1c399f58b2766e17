export function buildIsStale(root: string): boolean;
export function buildWebApp(root: string, options?: { quiet?: boolean }): number;
export function newestMtime(target: string): number;
