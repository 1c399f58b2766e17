export const SERVER_ENTRY: string;
export function serverBuildIsStale(root: string, outDir?: string): boolean;
export function buildServer(root: string, outDir?: string): Promise<string>;
export const SERVER_NODE_FLAGS: string[];
