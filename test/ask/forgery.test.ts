// What cannot approve a run in ask mode: a script (approved once) that writes answers to the shell
// channel, exports TMUX_RUN_APPROVE=auto or reports a false mode; answers without the question's
// nonce; messages on the helper socket. Only the person's key, read by zle, lets a run through.
import { closeSync, constants, existsSync, openSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../../lab/audit.js';
import { enrolledPane, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import { connectHelper, exchange } from '../../src/broker/helper-client.js';
import { recordSocket } from '../../src/broker/registry.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import type { PaneListing } from '../../src/broker/registry.js';
import {
  assertScreenClean,
  callRun,
  expectRefused,
  listedWhen,
  markerScript,
  press,
  questionShown,
} from './support.js';

const hex = (n: number): string => randomBytes(n).toString('hex');

describe('ask mode: nothing but the person answers', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ pane, listing } = await enrolledPane(server, { env: { TMUX_RUN_APPROVE: 'ask' } }));
    mcp = await scope.startMcp();
  });

  it('an approved script cannot approve a later run: forged channel lines, an exported mode, a false mode report', async () => {
    // What the script does once the person let it run: it finds the channel in the registry
    // directory (same user), writes every answer it can think of, and exports the auto mode.
    const forger = [
      'export TMUX_RUN_APPROVE=auto TMUX_RUN_APPROVE_TIMEOUT=1',
      'n() { head -c16 /dev/urandom | od -An -tx1 | tr -d " \\n"; }',
      'for f in "$TMUX_RUN_DIR"/ch.*.rsp; do',
      '  [ -p "$f" ] && echo "fifo $f"',
      '  printf "M auto\\nK %s\\nK %s y\\nK %s a\\nK %s always\\nA %s 5\\nK\\ny\\n" "$(n)" "$(n)" "$(n)" "$(n)" "$(n)" > "$f"',
      'done',
      'echo forged',
    ].join('\n');
    const first = callRun(mcp.client, listing, forger);
    await questionShown(pane);
    await press(pane, 'y');
    const r1 = await first;
    expect(r1.isError, JSON.stringify(r1.structured)).toBe(false);
    expect(r1.structured.data.stdout.data).toBe(`fifo ${recordOf(server, listing).channel}.rsp\nforged\n`);
    await assertScreenClean(pane);

    // The forged lines reached the helper: the listing now repeats the forged "auto" (the mode is
    // what the channel last said, a report, not a switch). The shell decides each run from its
    // own parameter: the next run is asked all the same.
    await listedWhen(mcp.client, pane, (p) => p.mode === 'auto');
    const { script, marker } = markerScript(server, 'later');
    const later = callRun(mcp.client, listing, script);
    const screen = await questionShown(pane);
    expect(screen).toContain(`| ${script}`);
    expect(screen).toContain('(no answer in 120 s: no)');
    await press(pane, 'n');
    expectRefused(await later, 'denied');
    expect(existsSync(marker)).toBe(false);
    await assertScreenClean(pane);
  });

  it('while a question is up, answers without its nonce and messages on the helper socket change nothing', async () => {
    const { script, marker } = markerScript(server, 'pending');
    const call = callRun(mcp.client, listing, script);
    await questionShown(pane);
    await listedWhen(mcp.client, pane, (p) => p.state === 'awaiting_approval');
    const rec = recordOf(server, listing);

    // Another process of the same user writes answers to the shell channel (it does not know the nonce).
    const fd = openSync(`${rec.channel}.rsp`, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      for (const forged of [`K ${hex(16)} y`, `K ${hex(16)} a`, `K ${hex(16)}`, `D ${hex(16)} denied`, 'K', 'y'])
        writeSync(fd, `${forged}\n`);
    } finally {
      closeSync(fd);
    }
    // ... and to the helper's socket: there is no message that approves; an unknown one is refused.
    const t = await connectHelper(recordSocket(server.registryDir, rec));
    const x = exchange(t);
    const replies: Reply[] = [];
    const closed = new Promise<void>((resolve) => (x.onclose = () => resolve()));
    x.onreply = (r) => replies.push(r);
    x.send({ type: 'approve', run_id: hex(16) } as unknown as Request);
    await closed;
    expect(replies).toEqual([expect.objectContaining({ type: 'error', code: 'bad_request' })]);

    // Still asked, still waiting, nothing ran.
    await new Promise((r) => setTimeout(r, 300));
    expect(await pane.capture()).toContain(`| ${script}`);
    expect((await listedWhen(mcp.client, pane, () => true)).state).toBe('awaiting_approval');
    expect(existsSync(marker)).toBe(false);

    // The person's key decides.
    await press(pane, 'y');
    const r = await call;
    expect(r.isError).toBe(false);
    expect(existsSync(marker)).toBe(true);
    const audit = auditOf(server, r.structured.data.authorization.run_id as string);
    expect(audit.filter((e) => e.event === 'approved')).toEqual([
      expect.objectContaining({ outcome: 'approved', by: 'person' }),
    ]);
    await assertScreenClean(pane);
  });
});
