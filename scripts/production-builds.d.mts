export declare const productionBuilds: { find: RegExp; replacement: string }[];
