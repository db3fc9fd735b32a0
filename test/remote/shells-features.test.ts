// What a local pane offers, shown for bash and for fish at the far end of `tmux-run ssh` (one ssh
// session per shell, kept for its cases): a terminal run (a Python REPL) driven through
// tmux_run_input and tmux_run_screen, a password prompt (echo: false, the notice naming `tmux-run
// attach`; bash on the screen check draws none, the screen's text says it), `tmux-run attach` from
// a local window, ask mode as that shell has it (bash with its builtin asks in the pane; fish
// refuses approval_unavailable), a long run with its tails cancelled (its process group gone from
// the host), the queue, background runs and `tmux-run stop`, tmux_runs and `tmux-run runs` naming
// the pane's host, `tmux-run watch`, notices as that shell draws them, the far host's sandbox, and
// a far helper that stays awake past TMUX_RUN_IDLE (listed `sleeps_after: never`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, type McpHandle, type RunCall } from '../../lab/mcp.js';
import { runCli } from '../../lab/cli.js';
import { productEnv } from '../../lab/product.js';
import { waitUntil } from '../../lab/waiting.js';
import { notice } from '../../lab/notices.js';
import { ok } from '../mcp/support.js';
import { cancel, heldRuns, runIdOf, start } from '../long/support.js';
import { expectPasswordPrompt } from '../input/support.js';
import { press, QUESTION } from '../ask/support.js';
import { sshdAvailable, userCmdlines } from './sshd.js';
import { itShowsTheSharedCases, remoteListings, typeAtFar, useRemote, type Far, type Remote } from './support.js';
import type { Pane } from '../../lab/pane.js';
import type { PaneListing } from '../../src/broker/registry.js';

const skip = sshdAvailable();
const PROMPT = 'far> ';
/** The far shell's TMUX_RUN_IDLE: a local helper would be dormant after it. */
const IDLE_S = 2;

interface ShellCase {
  shell: 'bash' | 'fish';
  user: string;
  /** The remote user's login shell, and the start-up file that sets the prompt and TMUX_RUN_IDLE. */
  path: string;
  rc: { file: string; text: string };
  /** What the person types there to set and unset a shell variable. */
  set(name: string, value: string): string;
  unset(name: string): string;
}

const CASES: ShellCase[] = [
  {
    shell: 'bash',
    user: 'trr-bash-sf',
    path: '/bin/bash',
    rc: {
      file: '.bashrc',
      text: `${readFileSync('/etc/skel/.bashrc', 'utf8')}\nPS1='${PROMPT}'\nexport TMUX_RUN_IDLE=${IDLE_S}\n`,
    },
    set: (n, v) => `${n}=${v}`,
    unset: (n) => `unset ${n}`,
  },
  {
    shell: 'fish',
    user: 'trr-fish-sf',
    path: '/usr/bin/fish',
    // (fish reads no ~/.profile; its config.fish is written before setup, below.)
    rc: { file: '.profile', text: '' },
    set: (n, v) => `set -g ${n} ${v}`,
    unset: (n) => `set -e ${n}`,
  },
];

const FISH_CONFIG = `set -g fish_greeting\nfunction fish_prompt; printf '${PROMPT}'; end\nset -gx TMUX_RUN_IDLE ${IDLE_S}\n`;

/** fish's own config.fish (a prompt, no greeting, TMUX_RUN_IDLE), in its directory. */
function writeFishConfig(remote: Remote): void {
  const { uid, home } = remote.user;
  for (const d of ['.config', '.config/fish']) {
    mkdirSync(join(home, d), { recursive: true, mode: 0o700 });
    chownSync(join(home, d), uid, uid);
  }
  writeFileSync(join(home, '.config/fish/config.fish'), FISH_CONFIG);
  chownSync(join(home, '.config/fish/config.fish'), uid, uid);
}

for (const c of CASES) {
  describe.skipIf(skip !== undefined)(
    `a pane on another host: the features of a local pane, ${c.shell} at the far end`,
    () => {
      const scope = useServer();
      const remote = useRemote(scope, c.user, c.path, c.rc);
      let mcp: McpHandle;
      let pane: Pane;
      let person: Pane;
      let listing: PaneListing;

      const typed = (cmd: string): Promise<void> => typeAtFar(pane, PROMPT, cmd);
      const listedNow = async (): Promise<PaneListing | undefined> =>
        (await remoteListings(mcp)).find((p) => p.pane_id === pane.id);
      /**
       * `call` again while it is refused editor_not_empty: the far shell has drawn its prompt a moment
       * before it reads keys (bash: context:not_reading), or before fish's screen shows it whole.
       */
      const whenReady = async <T extends { structured: Record<string, any> }>(call: () => Promise<T>): Promise<T> => {
        let r = await call();
        for (let i = 0; i < 30 && r.structured?.error?.code === 'editor_not_empty'; i++) {
          await new Promise((res) => setTimeout(res, 100));
          r = await call();
        }
        return r;
      };
      const run = (script: string): Promise<RunCall> => whenReady(() => callRun(mcp.client, listing, script));
      const startReady = async (script: string, extra?: Record<string, unknown>): Promise<Record<string, any>> =>
        (await whenReady(async () => ({ structured: await start(mcp.client, listing, script, extra) }))).structured;
      /** The suite as the shared cases use it. */
      const far = (): Far => ({ mcp, scope, listing, user: remote.user, pane, person, start: startReady, run });

      beforeAll(async () => {
        if (c.shell === 'fish') writeFishConfig(remote);
        await remote.cli(['setup', '--remote', '-F', remote.sshd.clientConfig, c.user]);
        mcp = await scope.startMcp();
        pane = await scope.server.newPane();
        await pane.type(remote.sshLine(), { enter: true });
        await pane.waitFor((s) => s.split('\n').some((l) => l === PROMPT.trimEnd()));
        listing = await waitUntil(listedNow, 15_000, 'the far end listed');
        person = await scope.server.newPane(); // a local window of the person's
      });
      afterAll(async () => {
        await pane?.type('exit', { enter: true });
      });

      it(`enrolls the far ${c.shell}, listed with its host and sleeps_after: never`, () => {
        expect(listing).toMatchObject({ shell: c.shell, host: { destination: c.user }, sleeps_after: 'never' });
        expect(listing.editor_check).toBe(c.shell === 'bash' ? 'exact' : 'screen');
      });

      it('a long run: pending with its tails, listed by tmux_runs and `tmux-run runs` with its host; cancelled, its process group gone from the host', async () => {
        const marker = `sleep 304.${process.pid}`;
        const s = await whenReady(async () => ({
          structured: await start(mcp.client, listing, `echo first; echo warn >&2; ${marker}; echo never`, {
            wait_ms: 1000,
          }),
        }));
        const id = runIdOf(s.structured);
        expect(s.structured.pending).toMatchObject({ state: 'running' });
        expect(s.structured.pending.stdout_tail).toEqual({ from: 0, encoding: 'utf-8', data: 'first\n' });
        expect(s.structured.pending.stderr_tail).toEqual({ from: 0, encoding: 'utf-8', data: 'warn\n' });
        await waitUntil(() => userCmdlines(remote.user.uid).some((l) => l.includes(marker)), 10_000, 'it runs there');
        // tmux_runs gives the pane's host as the listing does; `tmux-run runs` shows %N@HOST.
        const held = (await heldRuns(mcp.client)).find((r) => r.run_id === id);
        expect(held).toMatchObject({
          pane_id: pane.id,
          generation: listing.generation,
          state: 'running',
          host: listing.host,
        });
        const env = productEnv(scope.server);
        const table = await runCli(['runs'], env);
        expect(table.code, table.stderr).toBe(0);
        const row = table.stdout.split('\n').find((l) => l.includes(id.slice(0, 8)));
        expect(row).toContain(` ${pane.id}@${listing.host!.name} `);
        const json = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as Array<Record<string, any>>;
        expect(json.find((r) => r.run_id === id)?.host).toEqual(listing.host);
        const r = await cancel(mcp.client, listing, id, 10_000);
        expect(r.error).toMatchObject({ code: 'cancelled', delivery: 'observed' });
        expect(r.error.effects).toMatchObject({ state: 'known', completion: { state: 'signaled', signal: 15 } });
        expect(userCmdlines(remote.user.uid).some((l) => l.includes(marker))).toBe(false);
        expect(ok((await run('echo after')).structured).stdout.data).toBe('after\n');
      });

      itShowsTheSharedCases(far);

      it(`notices: the far ${c.shell} draws a run's start, its end in the start's row, and keeps a half-typed line`, async () => {
        // At the empty prompt: the end takes its start's row, one line left for the run.
        const id8 = runIdOf(await startReady('sleep 1; exit 5', { wait_ms: 0 })).slice(0, 8);
        await pane.waitFor((s) => s.includes(notice.started(id8)));
        const ended = await pane.waitFor((s) => notice.exited(id8, 5).test(s));
        expect(ended).not.toContain(notice.started(id8));
        expect(ended.split('\n').filter((l) => l.includes(`run ${id8}`))).toHaveLength(1);
        expect(ended.split('\n').at(-1)).toBe(PROMPT.trimEnd());
        // A line half-typed while a run goes on: its end drawn, the line kept as typed. (A word
        // of its own each time: fish would suggest the rest of a line from an earlier run's history.)
        const word = `half-${Date.now()}-typ`;
        const next = runIdOf(await startReady('sleep 2; exit 6', { wait_ms: 0 })).slice(0, 8);
        await pane.waitFor((s) => s.includes(notice.started(next)));
        await pane.type(`echo ${word}`);
        await pane.waitFor((s) => notice.exited(next, 6).test(s) && s.endsWith(`${PROMPT}echo ${word}`));
        await pane.type('ed', { enter: true });
        await pane.waitFor((s) => s.split('\n').includes(`${word}ed`));
        await pane.waitFor((s) => s.split('\n').at(-1) === PROMPT.trimEnd());
      });

      if (c.shell === 'bash') {
        it('ask mode at the far end: bash asks in the pane, y runs, n refuses; listed awaiting_approval', async () => {
          await typed(c.set('TMUX_RUN_APPROVE', 'ask'));
          try {
            await waitUntil(async () => (await listedNow())?.mode === 'ask' || undefined, 10_000, 'mode ask listed');
            const marker = join(remote.user.home, `asked-${process.pid}`);
            const yes = await askedCall(`touch ${marker}; echo approved`);
            const q = await pane.capture();
            expect(q).toContain('asks to run a script in this shell (TMUX_RUN_APPROVE=ask)');
            expect(existsSync(marker)).toBe(false);
            expect(await listedNow()).toMatchObject({ state: 'awaiting_approval', mode: 'ask' });
            await press(pane, 'y');
            expect(ok((await yes.answered).structured).stdout.data).toBe('approved\n');
            expect(existsSync(marker)).toBe(true);
            await pane.waitFor((s) => !s.includes(QUESTION));
            const no = await askedCall(`touch ${marker}-no`);
            await press(pane, 'n');
            const r = await no.answered;
            expect(r.structured.error).toMatchObject({
              code: 'denied',
              delivery: 'observed',
              effects: { state: 'none' },
            });
            expect(existsSync(`${marker}-no`)).toBe(false);
            await pane.waitFor((s) => !s.includes(QUESTION));
          } finally {
            await typed(c.unset('TMUX_RUN_APPROVE'));
          }
        });
      } else {
        it('ask mode at the far end: fish cannot ask, every run refused approval_unavailable, nothing run', async () => {
          await typed(c.set('TMUX_RUN_APPROVE', 'ask'));
          try {
            await waitUntil(async () => (await listedNow())?.mode === 'ask' || undefined, 10_000, 'mode ask listed');
            const marker = join(remote.user.home, `asked-${process.pid}`);
            const r = await run(`touch ${marker}`);
            expect(r.structured.error).toMatchObject({
              code: 'approval_unavailable',
              delivery: 'observed',
              effects: { state: 'none' },
            });
            expect(existsSync(marker)).toBe(false);
            expect(await pane.capture()).not.toContain(QUESTION);
          } finally {
            await typed(c.unset('TMUX_RUN_APPROVE'));
          }
          expect(ok((await run('echo asked-no-more')).structured).stdout.data).toBe('asked-no-more\n');
        });
      }

      it("the far host's sandbox: read-only refuses a write in the home, /tmp private", async () => {
        await typed(c.set('TMUX_RUN_SANDBOX', 'read-only'));
        const marker = join(remote.user.home, `walled-${process.pid}`);
        try {
          await waitUntil(
            async () => (await listedNow())?.sandbox === 'read-only' || undefined,
            10_000,
            'listed read-only',
          );
          const d = ok(
            (await run(`touch ${marker} 2>/dev/null; echo "home=$?"; echo x > /tmp/w && cat /tmp/w`)).structured,
          );
          expect(d.stdout.data).toBe('home=1\nx\n');
          expect(existsSync(marker)).toBe(false);
        } finally {
          await typed(c.unset('TMUX_RUN_SANDBOX'));
        }
        ok((await run(`touch ${marker}`)).structured);
        expect(existsSync(marker)).toBe(true);
      });

      it(`stays awake past TMUX_RUN_IDLE=${IDLE_S}: the same helper listed and serving, without a wake`, async () => {
        const before = (await listedNow())!;
        // The far helper was started with it (a local helper would take it: helper/dormancy.ts).
        const environ = readFileSync(`/proc/${before.helper_pid}/environ`, 'utf8').split('\0');
        expect(environ).toContain(`TMUX_RUN_IDLE=${IDLE_S}`);
        // Past the idle time, and past the 10 s a broker keeps an idle link (src/broker/link-pool.ts).
        await new Promise((r) => setTimeout(r, (IDLE_S + 11) * 1000));
        const after = (await listedNow())!;
        expect(after).toMatchObject({
          state: 'idle',
          sleeps_after: 'never',
          helper_pid: before.helper_pid,
          generation: before.generation,
        });
        expect(userCmdlines(remote.user.uid).filter((l) => l.includes('helper/main.js'))).toHaveLength(1);
        expect(ok((await run('echo still-awake')).structured).stdout.data).toBe('still-awake\n');
        expect((await listedNow())?.helper_pid).toBe(before.helper_pid);
      });

      if (c.shell === 'bash') {
        // Last: the shell is replaced by one without its builtin (a new generation).
        it('bash without its builtin (the screen check): a password prompt says echo false and tmux_run_screen names tmux-run attach; no notice in the pane', async () => {
          const old = listing;
          await pane.type('TMUX_RUN_NATIVE=off exec bash', { enter: true });
          listing = await waitUntil(
            async () => ((l) => (l && l.generation !== old.generation ? l : undefined))(await listedNow()),
            15_000,
            'the bash without its builtin listed',
          );
          expect(listing).toMatchObject({ editor_check: 'screen', host: { destination: c.user } });
          await expectPasswordPrompt(mcp.client, listing, pane, { notice: false, start: startReady });
        });
      }

      /** tmux_run of `script` in ask mode, once the question is drawn (a call refused before it is asked again). */
      async function askedCall(script: string): Promise<{ answered: Promise<RunCall> }> {
        for (let i = 0; i < 30; i++) {
          const call = callRun(mcp.client, listing, script);
          const asked = pane
            .waitFor((s) => s.includes(QUESTION), 15_000)
            .then(
              () => undefined,
              () => undefined,
            );
          const first = await Promise.race([call, asked]);
          if (first === undefined || first.structured?.error?.code !== 'editor_not_empty') return { answered: call };
          await new Promise((res) => setTimeout(res, 100));
        }
        throw new Error('the far shell never took the run to ask');
      }
    },
  );
}
