// Ask mode as the person lives it: a real zsh in a real tmux pane sets TMUX_RUN_APPROVE, the
// broker's runs show up as questions drawn by zle, and the test answers with send-keys as the
// person would (the product never types). Every case ends with a clean screen.
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditEventually, auditOf } from '../../lab/audit.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { SNIPPET } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import type { PaneListing } from '../../src/broker/registry.js';
import {
  QUESTION,
  assertScreenClean,
  callRun,
  expectRefused,
  listedWhen,
  markerScript,
  press,
  questionShown,
  typed,
} from './support.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('ask mode: the person approves each run in their pane', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ pane, listing } = await enrolledPane(server));
    mcp = await scope.startMcp();
    await typed(pane, 'TMUX_RUN_APPROVE=ask');
  });

  it('shows the run and y runs it, however long the person thinks (not shell_busy)', async () => {
    await listedWhen(mcp.client, pane, (p) => p.mode === 'ask');
    const { script, marker } = markerScript(server, 'yes');
    const phases: string[] = [];
    const call = callRun(
      mcp.client,
      listing,
      `${script}\nprintf 'tab\\there\\033[31m red'\n`,
      {},
      {
        onprogress: (p) => phases.push(p.message ?? ''),
      },
    );
    const screen = await questionShown(pane);
    // The person reads; the shell is at its prompt, the run waits for them.
    const asked = await listedWhen(mcp.client, pane, (p) => p.state === 'awaiting_approval');
    expect(asked.mode).toBe('ask');
    await sleep(1500);
    expect(existsSync(marker)).toBe(false);
    const question = screen.slice(screen.indexOf('tmux-run: an agent'));
    console.log(`the question as the person sees it:\n${question}`);
    const lines = question.split('\n');
    // Who asked: the name and version the test's MCP client gave in initialize.
    expect(lines[0]).toBe(
      'tmux-run: an agent (tmux-run-tests 1.0.0) asks to run a script in this shell (TMUX_RUN_APPROVE=ask)',
    );
    expect(lines[1]).toMatch(/^ {2}run [0-9a-f]{8} {2}sha256 [0-9a-f]{12} {2}\d+ bytes, 2 lines:$/);
    expect(lines[2]).toBe(`  | ${script}`);
    // Control characters in the script are shown escaped, never acted on.
    expect(lines[3]).toBe("  | printf 'tab\\there\\033[31m red'");
    expect(lines[4]).toBe('  sandbox: off (TMUX_RUN_SANDBOX: it can touch all you can)');
    expect(lines[5]).toBe(`Run it? ${QUESTION} for this script (no answer in 120 s: no)`);
    await press(pane, 'y');
    const r = await call;
    expect(r.isError, JSON.stringify(r.structured)).toBe(false);
    expect(r.structured.data.stdout.data).toBe('yes\ntab\there\x1b[31m red');
    expect(existsSync(marker)).toBe(true);
    const runId = r.structured.data.authorization.run_id as string;
    expect(lines[1]).toContain(
      `run ${runId.slice(0, 8)}  sha256 ${(r.structured.data.authorization.script_digest as string).slice(0, 12)}`,
    );
    expect(phases.some((m) => /waiting for the person at the pane to approve/.test(m))).toBe(true);
    const audit = auditOf(server, runId);
    expect(audit.map((e) => e.event)).toEqual(['approved', 'start', 'end']);
    expect(audit[0]).toMatchObject({ outcome: 'approved', by: 'person' });
    expect(audit[0]).not.toHaveProperty('always');
    await assertScreenClean(pane);
  });

  it('n, Escape and any other key refuse with denied; nothing runs', async () => {
    for (const key of ['C-c', 'n', 'Escape', 'x', 'Up', 'Y']) {
      const { script, marker } = markerScript(server, 'denied');
      const call = callRun(mcp.client, listing, script);
      await questionShown(pane);
      await press(pane, key);
      const r = await call;
      expectRefused(r, 'denied');
      expect(existsSync(marker), key).toBe(false);
      const runId = r.structured.error.effects.authorization.run_id as string;
      const audit = auditOf(server, runId);
      expect(audit).toEqual([expect.objectContaining({ event: 'refused', outcome: 'denied', by: 'person' })]);
      // Not one byte of the key (nor of an arrow key's sequence) is left in the line editor.
      await assertScreenClean(pane);
    }
    expect(await typed(pane, 'echo editor-still-works')).toBe('editor-still-works');
  });

  it('no key within TMUX_RUN_APPROVE_TIMEOUT refuses with approval_timeout', async () => {
    await typed(pane, 'TMUX_RUN_APPROVE_TIMEOUT=2');
    try {
      const { script, marker } = markerScript(server, 'timeout');
      const call = callRun(mcp.client, listing, script);
      const screen = await questionShown(pane);
      expect(screen).toContain('(no answer in 2 s: no)');
      const r = await call;
      expectRefused(r, 'approval_timeout');
      expect(r.structured.error.message).toMatch(/did not answer within 2 s/);
      expect(existsSync(marker)).toBe(false);
      const runId = r.structured.error.effects.authorization.run_id as string;
      expect(auditOf(server, runId)).toEqual([
        expect.objectContaining({ event: 'refused', outcome: 'approval_timeout', by: 'person' }),
      ]);
      await assertScreenClean(pane);
    } finally {
      await typed(pane, 'unset TMUX_RUN_APPROVE_TIMEOUT');
    }
  });

  it('a bad TMUX_RUN_APPROVE_TIMEOUT falls back to 120 s and the question says so', async () => {
    await typed(pane, 'TMUX_RUN_APPROVE_TIMEOUT=soon');
    try {
      const call = callRun(mcp.client, listing, 'true');
      const screen = await questionShown(pane);
      expect(screen).toContain('(TMUX_RUN_APPROVE_TIMEOUT=soon is not a whole number of seconds');
      expect(screen).toContain('(no answer in 120 s: no)');
      await press(pane, 'n');
      expectRefused(await call, 'denied');
      await assertScreenClean(pane);
    } finally {
      await typed(pane, 'unset TMUX_RUN_APPROVE_TIMEOUT');
    }
  });

  it('a runs and stops asking for that exact digest only', async () => {
    const script = `echo always-${Date.now()}`;
    const first = callRun(mcp.client, listing, script);
    await questionShown(pane);
    await press(pane, 'a');
    const r1 = await first;
    expect(r1.isError).toBe(false);
    await assertScreenClean(pane);
    const a1 = auditOf(server, r1.structured.data.authorization.run_id as string);
    expect(a1[0]).toMatchObject({ event: 'approved', by: 'person', remember: true });

    // The same script again: no question, no key.
    const r2 = await callRun(mcp.client, listing, script);
    expect(r2.isError).toBe(false);
    expect(r2.structured.data.stdout.data).toBe(r1.structured.data.stdout.data);
    const a2 = auditOf(server, r2.structured.data.authorization.run_id as string);
    expect(a2[0]).toMatchObject({ event: 'approved', outcome: 'approved', by: 'person', always: true });
    await assertScreenClean(pane);

    // One byte different: asked again.
    const third = callRun(mcp.client, listing, `${script} `);
    await questionShown(pane);
    await press(pane, 'n');
    expectRefused(await third, 'denied');
    await assertScreenClean(pane);
  });

  it('a cancelled run withdraws its question and leaves the line editor usable', async () => {
    const { script, marker } = markerScript(server, 'cancelled');
    const ac = new AbortController();
    const call = callRun(mcp.client, listing, script, {}, { signal: ac.signal });
    await questionShown(pane);
    ac.abort();
    await expect(call).rejects.toThrow();
    await assertScreenClean(pane);
    expect(await typed(pane, 'echo typed-after-cancel')).toBe('typed-after-cancel');
    expect(existsSync(marker)).toBe(false);
    await listedWhen(mcp.client, pane, (p) => p.state === 'idle');
  });

  it('auto (or unset) does not ask; switching the parameter takes effect at the next run', async () => {
    await typed(pane, 'TMUX_RUN_APPROVE=auto');
    expect((await listedWhen(mcp.client, pane, (p) => p.mode === 'auto')).mode).toBe('auto');
    const before = await pane.capture();
    const r1 = await callRun(mcp.client, listing, 'echo not-asked');
    expect(r1.isError).toBe(false);
    // The end entry follows the reply in the same turn of the helper, so the reply may reach the
    // broker first (its write can complete at once): wait for the entry, then look at them all.
    const id1 = r1.structured.data.authorization.run_id as string;
    await auditEventually(server, id1, (e) => e.event === 'end');
    expect(auditOf(server, id1).map((e) => e.event)).toEqual(['start', 'end']);
    expect(await pane.capture()).toBe(before);

    await typed(pane, 'unset TMUX_RUN_APPROVE');
    expect((await callRun(mcp.client, listing, 'echo unset-not-asked')).isError).toBe(false);

    await typed(pane, 'TMUX_RUN_APPROVE=ask');
    const asked = callRun(mcp.client, listing, 'echo asked-again');
    await questionShown(pane);
    await press(pane, 'y');
    expect((await asked).structured.data.stdout.data).toBe('asked-again\n');
    await assertScreenClean(pane);

    // The CLI shows the mode too.
    const { stdout: out } = await runCli(['panes'], { ...server.env, NO_COLOR: '1' });
    expect(out.split('\n')[0]).toMatch(/\bSTATE\s+MODE\b/);
    expect(out).toMatch(new RegExp(`^${pane.id}\\s.*\\sidle\\s+ask\\s`, 'm'));
  });

  it('queued runs, from this broker and a second one, each wait for their own answer', async () => {
    const other = await scope.startMcp();
    try {
      const a = markerScript(server, 'first');
      const b = markerScript(server, 'second');
      const first = callRun(mcp.client, listing, a.script);
      const s1 = await questionShown(pane);
      const second = callRun(other.client, listing, b.script);
      // The second run waits its turn behind the question (queued, not refused as busy).
      await listedWhen(mcp.client, pane, (p) => p.state === 'awaiting_approval' && p.queued === 1);
      expect(s1).toContain(`| ${a.script}`);
      await press(pane, 'y');
      const r1 = await first;
      expect(r1.isError).toBe(false);
      const s2 = await pane.waitFor((s) => s.includes(QUESTION) && s.includes(`| ${b.script}`));
      expect(s2).not.toContain(`| ${a.script}`);
      await press(pane, 'n');
      expectRefused(await second, 'denied');
      expect(existsSync(a.marker)).toBe(true);
      expect(existsSync(b.marker)).toBe(false);
      await assertScreenClean(pane);
    } finally {
      await other.close();
    }
  });

  it('[a]lways lasts for the enrollment only: enrolled again, the same script is asked again', async () => {
    const script = `echo remembered-${Date.now()}`;
    const first = callRun(mcp.client, listing, script);
    await questionShown(pane);
    await press(pane, 'a');
    expect((await first).isError).toBe(false);
    expect((await callRun(mcp.client, listing, script)).isError).toBe(false);
    await typed(pane, 'tmux_run_unenroll');
    await typed(pane, `source ${SNIPPET}`);
    listing = await listedWhen(mcp.client, pane, (p) => p.generation !== listing.generation);
    const again = callRun(mcp.client, listing, script);
    await questionShown(pane);
    await press(pane, 'n');
    expectRefused(await again, 'denied');
    await assertScreenClean(pane);
  });
});

describe('ask mode with notices on', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let pane: Pane;
  let listing: PaneListing;

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ pane, listing } = await enrolledPane(server, { env: { TMUX_RUN_NOTIFY: 'on', TMUX_RUN_APPROVE: 'ask' } }));
    mcp = await scope.startMcp();
  });

  it('says what the person decided, below an empty prompt', async () => {
    const call = callRun(mcp.client, listing, 'echo hi');
    await questionShown(pane);
    await press(pane, 'n');
    const r = await call;
    expectRefused(r, 'denied');
    const id8 = (r.structured.error.effects.authorization.run_id as string).slice(0, 8);
    const screen = await pane.waitFor((s) => s.includes(`tmux-run: run ${id8} refused; nothing was run`));
    expect(screen).not.toContain(QUESTION);
    const lines = screen.split('\n');
    expect(lines.slice(-2)).toEqual(['$', `tmux-run: run ${id8} refused; nothing was run`]);
    await pane.waitForPrompt();
  });
});
