// The far end's watch on its control link (docs/remote.md, "When the session ends"): the relay
// says `beat` every LINK_BEAT_MS, so a link silent for LINK_SILENT_MS is a session whose network
// dropped. The ssh client here notices first (ServerAliveInterval) and the pane is unlisted; the
// far host's sshd may not notice for hours (no ClientAliveInterval in a stock sshd_config, TCP's
// own timeout), and meanwhile the helper ends and stops every run's process group it started.
import { LINK_SILENT_MS } from '../../src/core/enrollment/remote-link.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';

/** Calls `silent` once when nothing was heard for LINK_SILENT_MS; `heard()` on each message. */
export function watchLink(silent: (ms: number) => void): { heard: () => void } {
  let last = monotonicMs();
  const timer = setInterval(
    () => {
      const quiet = monotonicMs() - last;
      if (quiet < LINK_SILENT_MS) return;
      clearInterval(timer);
      silent(quiet);
    },
    Math.min(1000, LINK_SILENT_MS / 4),
  );
  timer.unref();
  return { heard: () => void (last = monotonicMs()) };
}
