// A woken helper's notices: it numbers them from 1 again, and each shell draws them as it drew the
// first helper's (nothing is lost across a dormant spell, not a notice: docs/light.md).
import { describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { enroll } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, startMcp } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { bashPane, enrollBash } from '../bash/support.js';
import { enrollFish, fishPane } from '../fish/support.js';
import { explain, IDLE_S, waitDormant } from './support.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: IDLE_S } });

/** Notices on (the harness turns them off). */
const NOTICES = { env: { TMUX_RUN_NOTIFY: undefined } };

const SHELLS: { name: string; open: (s: TmuxServer) => Promise<Pane>; enroll: (p: Pane) => Promise<PaneListing> }[] = [
  { name: 'zsh', open: (s) => s.newPane(NOTICES), enroll: (p) => enroll(p) },
  { name: 'bash', open: (s) => bashPane(s, NOTICES), enroll: (p) => enrollBash(p) },
  { name: 'fish', open: (s) => fishPane(s, NOTICES), enroll: (p) => enrollFish(p) },
];

describe.each(SHELLS)('a woken $name pane', (sh) => {
  it('shows the notices of the runs after the wake', async () => {
    const server = scope.server;
    const pane = await sh.open(server);
    const listing = await sh.enroll(pane);
    const shows = async (runId: string, what: string): Promise<void> => {
      await waitUntil(
        async () => (await pane.capture()).includes(`tmux-run: run ${runId.slice(0, 8)}`),
        10_000,
        what,
      ).catch(async (e: Error) => {
        throw new Error(`${e.message}\n${await explain(pane)}`, { cause: e });
      });
    };
    let mcp = await startMcp(server);
    try {
      const before = await callRun(mcp.client, listing, 'true');
      expect(before.isError, JSON.stringify(before.structured)).toBe(false);
      await shows(before.structured.data.authorization.run_id, 'the first helper’s notice');
    } finally {
      await mcp.close();
    }
    await waitDormant(pane);
    mcp = await startMcp(server);
    try {
      for (const n of [1, 2]) {
        const after = await callRun(mcp.client, listing, 'true');
        expect(after.isError, JSON.stringify(after.structured)).toBe(false);
        await shows(after.structured.data.authorization.run_id, `the woken helper’s notice ${n}`);
      }
    } finally {
      await mcp.close();
    }
  });
});
