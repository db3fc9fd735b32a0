// The sandbox in a bash pane, read from the shell at each run exactly as in zsh (the snapshot's
// :NAME=VALUE entries): a write outside the cwd tree refused, ~/.ssh hidden, the tmux socket
// out of reach; the listing shows it; arrays for the lists are joined with ':'.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../../lab/audit.js';
import { waitUntil } from '../../lab/waiting.js';
import { listed } from '../../lab/enrollment.js';
import { bashFixture, ok, refusal, type BashFixture } from './support.js';

let fx: BashFixture;
let project: string;
beforeAll(async () => {
  fx = await bashFixture();
  project = join(fx.server.home, 'project');
  mkdirSync(project);
  mkdirSync(join(fx.server.home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(fx.server.home, '.ssh', 'id_test'), 'SSH-SECRET\n', { mode: 0o600 });
  await fx.pane.run(`cd ${project}; TMUX_RUN_SANDBOX=workspace; export SANDBOX_VAR=live`);
});
afterAll(async () => {
  expect(await fx.scope.close()).toEqual([]);
});

describe('the sandbox in a bash pane', () => {
  it('is listed as of the last prompt', async () => {
    await waitUntil(async () =>
      (await listed(fx.server.registryDir)).some((p) => p.pane_id === fx.pane.id && p.sandbox === 'workspace'),
    );
  });

  it('writes in the cwd tree, not beside it, with the live exports; audited with its sandbox', async () => {
    const outside = join(fx.server.home, 'outside-marker');
    // (The harness's directories live under /tmp: a write beside the project lands in the private /tmp.)
    const d = ok(await fx.run(`echo "$SANDBOX_VAR" > built.txt; touch '${outside}' 2>/dev/null; pwd`));
    expect(d.stdout.data).toBe(`${project}\n`);
    expect(readFileSync(join(project, 'built.txt'), 'utf8')).toBe('live\n');
    expect(existsSync(outside)).toBe(false);
    expect(auditOf(fx.server, d.authorization.run_id).find((e) => e.event === 'start')?.sandbox).toBe('workspace');
  });

  it('hides ~/.ssh and keeps the tmux socket out of reach', async () => {
    const probe = `tmux -S '${fx.server.socket}' display -p -t '${fx.pane.id}' 'reached #{pane_id}'`;
    const d = ok(
      await fx.run(
        [
          'cat ~/.ssh/id_test; echo "ssh $?"',
          `${probe} 2>/dev/null; echo "tmux $?"`,
          `ls '${dirname(fx.server.socket)}' 2>/dev/null | grep -c . || true`,
        ].join('\n'),
      ),
    );
    expect(d.stdout.data).not.toContain('SSH-SECRET');
    expect(d.stdout.data).not.toContain('reached');
    expect(d.stdout.data).toMatch(/^ssh [1-9]/m);
    expect(d.stdout.data).toMatch(/^tmux [1-9]/m);
  });

  it('takes TMUX_RUN_SANDBOX_WRITE as a bash array, joined with colons', async () => {
    const extra = join(fx.server.home, 'extra');
    const other = join(fx.server.home, 'other');
    mkdirSync(extra);
    mkdirSync(other);
    await fx.pane.run(`TMUX_RUN_SANDBOX_WRITE=('${extra}' '${other}')`);
    ok(await fx.run(`touch '${extra}/a' '${other}/b'`));
    expect(existsSync(join(extra, 'a')) && existsSync(join(other, 'b'))).toBe(true);
    await fx.pane.run('unset TMUX_RUN_SANDBOX_WRITE; TMUX_RUN_SANDBOX=worksapce');
    const e = refusal(await fx.run('true'));
    expect(e.code).toBe('sandbox_unavailable');
    expect(e.message).toContain('worksapce');
    await fx.pane.run('TMUX_RUN_SANDBOX=off');
  });
});
