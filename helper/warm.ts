// What the build runs of the bundled helper before it makes the bundle's code cache
// (scripts/build-helper.mjs, helper/bundle.ts): calls that a start or a pane's first run makes
// anyway, into functions V8 compiles only when they are first called (the wire validator, about
// 230 KB of generated code, and the framing), so that their compiled code comes from the cache
// too. Nothing here touches a pane, a file or the network.
import { encodeFrame, FrameDecoder } from '../src/core/protocol/framing.js';
import { checkRequest } from '../src/core/protocol/messages.js';

const hex = (n: number): string => 'a'.repeat(n);

export function warmUp(): void {
  const run = {
    type: 'run',
    binding: {
      run_id: hex(32),
      script_digest: hex(64),
      server_generation: hex(32),
      pane_id: '%0',
      enrollment_generation: hex(32),
      process_generation: hex(32),
      stdout_limit: 65536,
      stderr_limit: 65536,
      issued_at: 0,
    },
    token: hex(64),
    script: 'true',
    progress: false,
  };
  for (const request of [{ type: 'ping' }, run, { type: 'status' }]) {
    new FrameDecoder().push(encodeFrame(request)).forEach(checkRequest);
  }
}
