export declare const reactToPreact: { find: RegExp; replacement: string }[];
