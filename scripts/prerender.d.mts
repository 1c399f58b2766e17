export declare function prerenderPublicPages(root: string, outDir: string): Promise<string>;
