export declare const PRERENDER_FILE: string;
export declare function prerenderLanding(root: string, outDir: string): Promise<string>;
