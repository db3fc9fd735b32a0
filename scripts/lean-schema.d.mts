// Types of scripts/lean-schema.mjs (imported by the build script and by its test).
export declare const ANNOTATIONS: ReadonlySet<string>;
export declare function leanSchema(node: unknown): unknown;
