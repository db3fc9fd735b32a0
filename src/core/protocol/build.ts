// Which build of tmux-run this code is: a digest of the broker's and the helper's sources and the
// wire schemas, made by the build (scripts/build-validators.mjs). A helper puts it in its
// enrollment record; a broker talks only to helpers of its own build, since a helper started
// before an upgrade keeps running the old code and may speak an older protocol.
import type * as BuildIdModule from '../../../generated/build-id.cjs';
import { loadGenerated } from './generated.js';

export const BUILD_ID: string = loadGenerated<typeof BuildIdModule>('build-id').BUILD_ID;
