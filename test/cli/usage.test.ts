// The command line itself: help everywhere, one-line refusals of bad input, exit statuses.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lab/cli.js';
import { sandbox } from './support.js';

const box = sandbox();
afterAll(() => box.remove());

const COMMANDS = ['panes', 'runs', 'watch', 'stop', 'revoke', 'snippet', 'log', 'doctor', 'setup'];

describe('tmux-run usage', () => {
  it('prints usage for --help, -h and help, exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await runCli(args, box.env);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: tmux-run COMMAND/);
      for (const c of COMMANDS) expect(r.stdout).toContain(`  ${c} `);
      expect(r.stderr).toBe('');
    }
  });

  it("prints each command's help with --help and -h, exit 0", async () => {
    for (const c of COMMANDS) {
      for (const flag of ['--help', '-h']) {
        const r = await runCli([c, flag], box.env);
        expect(r.code, `${c} ${flag}`).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^Usage: tmux-run ${c}\\b`));
        expect(r.stderr).toBe('');
      }
      const viaHelp = await runCli(['help', c], box.env);
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: tmux-run ${c}\\b`));
    }
    // help wins over other mistakes on the same line
    expect((await runCli(['revoke', '--bogus', '--help'], box.env)).code).toBe(0);
    // 27 CLI starts one after another (the suite's 180 s guard against a hang covers them).
  });

  it('prints the snippet path and lines as JSON with --json, for every shell or for --shell', async () => {
    const r = await runCli(['snippet', '--json'], box.env);
    expect(r.code).toBe(0);
    interface Info {
      shell: string;
      path: string;
      source_line: string;
      rc_file: string;
      rc_line: string;
      zshrc_line?: string;
    }
    const j = JSON.parse(r.stdout) as Info & { shells: Info[] };
    expect(j.path).toMatch(/\/shell\/tmux-run\.zsh$/);
    expect(j.source_line).toBe(`source ${j.path}`);
    expect(j.zshrc_line).toBe(`[[ -n $TMUX ]] && source ${j.path}`);
    expect(j.rc_file).toBe(join(box.dir, '.zshrc'));
    expect(j.shells.map((s) => [s.shell, s.rc_file])).toEqual([
      ['zsh', join(box.dir, '.zshrc')],
      ['bash', join(box.dir, '.bashrc')],
      ['fish', join(box.dir, '.config', 'fish', 'conf.d', 'tmux-run.fish')],
    ]);
    const fish = JSON.parse((await runCli(['snippet', '--shell', 'fish', '--json'], box.env)).stdout) as Info;
    expect(fish).toEqual({ ...j.shells[2], present: true });
    expect(fish.path).toMatch(/\/shell\/tmux-run\.fish$/);
    expect(fish.rc_line).toBe(`set -q TMUX; and status is-interactive; and source ${fish.path}`);
    const bad = await runCli(['snippet', '--shell', 'csh'], box.env);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      "tmux-run: snippet: unknown shell 'csh' (tmux-run enrolls panes of zsh, bash, fish) (see 'tmux-run snippet --help')\n",
    ]);
  });

  it('puts usage on stderr with exit 2 when the command is missing or unknown', async () => {
    const none = await runCli([], box.env);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^Usage: tmux-run COMMAND/);
    const unknown = await runCli(['frobnicate'], box.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe("tmux-run: unknown command 'frobnicate'");
    expect(unknown.stderr).toContain('Usage: tmux-run COMMAND');
  });

  it('refuses bad options and arguments with one line and exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['panes', '--bogus'], /unknown option --bogus/],
      [['panes', 'extra'], /unexpected argument 'extra'/],
      [['panes', '--json=yes'], /takes no value/],
      [['revoke'], /missing argument PANE/],
      [['revoke', '%1', '%2'], /unexpected argument '%2'/],
      [['revoke', 'nonsense!'], /neither a pane id/],
      [['revoke', '%1', '--generation'], /needs a value/],
      [['revoke', '%1', '--generation', 'xyz'], /--generation takes a generation/],
      [['snippet', 'now'], /unexpected argument 'now'/],
      [['log', '--pane', '3'], /--pane takes a pane id/],
      [['log', '--run', 'not-hex'], /--run takes a run id/],
      [['log', '--since', 'yesterday'], /--since takes a duration/],
      [['log', '--follow', 'x'], /unexpected argument/],
      [['doctor', '--fix'], /unknown option --fix/],
      [['panes', '--\x1b[2J'], /unknown option --\\x1b\[2J/],
    ];
    for (const [args, re] of cases) {
      const r = await runCli(args, box.env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      const lines = r.stderr.split('\n');
      expect(lines, args.join(' ')).toHaveLength(2); // one line and its newline
      expect(lines[0]).toMatch(/^tmux-run: /);
      expect(lines[0]).toMatch(re);
      expect(r.stderr).not.toMatch(/\x1b/);
    }
  });

  it('fails with one line and exit 1 for an error that is not about usage', async () => {
    const r = await runCli(['revoke', '%7'], box.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('tmux-run: no enrolled pane %7\n');
  });

  it('prints the snippet path and the .zshrc line', async () => {
    const r = await runCli(['snippet'], box.env);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^\/.*\/shell\/tmux-run\.zsh$/);
    expect(lines).toContain(`    [[ -n $TMUX ]] && source ${lines[0]}`);
    expect(lines).toContain(`    source ${lines[0]}`);
    const fish = (await runCli(['snippet', '--shell', 'fish'], box.env)).stdout.split('\n');
    expect(fish[0]).toMatch(/^\/.*\/shell\/tmux-run\.fish$/);
    expect(fish).toContain(`    set -q TMUX; and status is-interactive; and source ${fish[0]}`);
  });
});
