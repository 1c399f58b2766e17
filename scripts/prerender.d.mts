export declare function prerenderLanding(root: string, outDir: string): Promise<string>;
