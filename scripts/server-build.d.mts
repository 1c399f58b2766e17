import type { BuildOptions } from 'esbuild';
export const SERVER_ENTRY: string;
export function serverBuildIsStale(root: string, outDir?: string): boolean;
export function buildServer(root: string, outDir?: string): Promise<string>;
export function ensureServerBuilt(root: string, onBuild?: () => void): Promise<string>;
export const BUNDLE_OPTIONS: BuildOptions;
export const SERVER_NODE_FLAGS: string[];
export function runtimeFlags(): string[];
export const SERVER_ENV: Record<string, string>;
export function serverLaunch(entry: string, env: NodeJS.ProcessEnv): { args: string[]; env: NodeJS.ProcessEnv };
/** Keeps only our own code's mappings in an esbuild source map (rewrites the file). */
export function keepOwnMappings(mapFile: string): void;
