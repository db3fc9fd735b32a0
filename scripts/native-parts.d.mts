export declare const NATIVE_PARTS: readonly {
  name: string;
  sources: readonly string[];
  without: string;
  builtin?: boolean;
}[];
export declare function nativeSources(root: string, name: string): string[];
