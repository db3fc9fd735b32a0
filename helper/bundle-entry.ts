// What the helper's bundle exports (scripts/build-helper.mjs bundles from here; helper/bundle.ts
// loads it): the helper itself, and the warm-up the build runs before it makes the code cache.
export { runHelper } from './helper.js';
export { warmUp } from './warm.js';
