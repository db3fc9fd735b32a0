// How long enrolling takes, as a person feels it: from typing `source ...` + Enter to the pane
// being listed by the broker. Measured, printed, not asserted (machines differ).
import { beforeAll, expect, it } from 'vitest';
import { filesIn, listed } from '../support/enrollment.js';
import { SOURCE } from '../support/product.js';
import { useServer } from '../support/lifecycle.js';
import { sleep } from '../support/waiting.js';
import type { TmuxServer } from '../support/server.js';

let server: TmuxServer;

const scope = useServer();
beforeAll(() => {
  server = scope.server;
});

it('enrollment latency: typing `source` + Enter until listed (median of 10)', async () => {
  const pane = await server.newPane();
  const shellPid = await pane.shellPid();
  const samples: number[] = [];
  for (let i = 0; i < 10; i++) {
    await pane.waitForPrompt();
    const t0 = performance.now();
    await pane.type(SOURCE, { enter: true });
    for (;;) {
      const all = await listed(server.registryDir);
      if (all.some((p) => p.pane_id === pane.id && p.shell_pid === shellPid)) break;
      if (performance.now() - t0 > 20_000) throw new Error('not listed within 20 s');
      await sleep(2);
    }
    samples.push(performance.now() - t0);
    expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    expect(filesIn(server.registryDir)).toEqual([]);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const median = (sorted[4]! + sorted[5]!) / 2;
  console.log(
    `tmux-run enrollment latency (source + Enter -> listed by listEnrolled), n=10: ` +
      `median ${median.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted[9]!.toFixed(0)} ms ` +
      `[${samples.map((s) => s.toFixed(0)).join(', ')}]`,
  );
  expect(samples).toHaveLength(10);
}, 120_000);
