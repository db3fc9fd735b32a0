// What the server's bundle exports (scripts/build-helper.mjs bundles from here; src/mcp/bundle.ts
// loads it): the server serving on stdio, and the warm-up the build runs before it makes the code cache.
export { serve, warmUp } from './serve.js';
