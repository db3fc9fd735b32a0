// `tmux-run setup --shell zsh|bash|fish` against a scratch HOME: each shell's start-up file gets
// its line in a marked block, once, and --undo gives the file back byte for byte (fish's own
// conf.d file goes away again); the shell comes from $SHELL; a real fish reads what was written.
// And VS Code's entry: a workspace's .vscode/mcp.json inside one, the user profile's elsewhere.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collect, type CliResult } from '../../lab/cli.js';
import { CLI_BIN, ROOT } from '../../lab/product.js';
import { sandbox, type Sandbox } from './support.js';
import { rcBlock } from '../../src/cli/setup/rc.js';
import { shellNamed } from '../../src/cli/common/shells.js';

const FISH = shellNamed('fish')!;
const FISH_SNIPPET = join(ROOT, 'shell', 'tmux-run.fish');
const FISH_LINE = `set -q TMUX; and status is-interactive; and source ${FISH_SNIPPET}`;

let box: Sandbox;
let home: string;
let project: string;
beforeEach(() => {
  box = sandbox();
  home = box.dir;
  project = join(home, 'project');
  mkdirSync(project);
});
afterEach(() => box.remove());

/** Runs `tmux-run setup ...args` in `cwd` (the scratch project) with the scratch HOME. */
function setup(args: string[], extra: Record<string, string> = {}, cwd = project): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI_BIN, 'setup', ...args], {
    cwd,
    env: { ...box.env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

interface Rc {
  shell: string;
  file: string;
  status: string;
  written: boolean;
  backup: string | null;
  line: string;
}
interface Report {
  rc: Rc | null;
  zshrc: Rc | null;
  clients: { client: string; file: string; status: string }[];
}
const json = (r: CliResult): Report => JSON.parse(r.stdout) as Report;
const modeOf = (path: string): number => statSync(path).mode & 0o7777;

describe('tmux-run setup --shell', () => {
  it("writes fish's conf.d/tmux-run.fish (XDG_CONFIG_HOME respected), once, and --undo removes it again", async () => {
    const xdg = join(home, 'xdg');
    const file = join(xdg, 'fish', 'conf.d', 'tmux-run.fish');
    const first = await setup(['--shell', 'fish', '--json'], { XDG_CONFIG_HOME: xdg });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(json(first).rc).toMatchObject({ shell: 'fish', file, status: 'added', written: true, line: FISH_LINE });
    expect(json(first).zshrc).toBeNull();
    expect(readFileSync(file, 'utf8')).toBe(rcBlock(FISH, FISH_LINE));
    expect(modeOf(file)).toBe(0o600);
    expect(json(await setup(['--shell', 'fish', '--json'], { XDG_CONFIG_HOME: xdg })).rc?.status).toBe('present');

    // A real fish reads it at start: outside tmux, and inside tmux but not interactive, it does nothing.
    for (const [args, tmux] of [
      [['-i', '-c', 'echo ok'], {}],
      [['-c', 'echo ok'], { TMUX: '/tmp/none,1,0' }],
    ] as const) {
      const fish = spawnSync('fish', args, {
        env: { PATH: box.env.PATH, HOME: home, XDG_CONFIG_HOME: xdg, TERM: 'xterm-256color', ...tmux },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect([fish.status, fish.stdout, fish.stderr]).toEqual([0, 'ok\n', '']);
    }

    const undo = await setup(['--undo', '--shell', 'fish'], { XDG_CONFIG_HOME: xdg });
    expect(undo.code).toBe(0);
    expect(undo.stdout).toMatch(/tmux-run\.fish: the tmux-run block removed/);
    expect(existsSync(file)).toBe(false);
    expect((await setup(['--undo', '--shell', 'fish'], { XDG_CONFIG_HOME: xdg })).stdout).toMatch(
      /no tmux-run block to remove/,
    );
  });

  it("adds the block to a fish file of the person's and --undo gives it back byte for byte", async () => {
    const file = join(home, '.config', 'fish', 'conf.d', 'tmux-run.fish');
    mkdirSync(join(file, '..'), { recursive: true });
    const mine = '# mine\nset -gx EDITOR vim';
    writeFileSync(file, mine);
    chmodSync(file, 0o644);
    // The shell from $SHELL, by its basename.
    const r = json(await setup(['--json'], { SHELL: '/usr/local/bin/fish' }));
    expect(r.rc).toMatchObject({ shell: 'fish', file, status: 'added' });
    expect(readFileSync(file, 'utf8')).toBe(`${mine}\n${rcBlock(FISH, FISH_LINE)}`);
    expect(readFileSync(r.rc!.backup!, 'utf8')).toBe(mine);
    expect((await setup(['--undo'], { SHELL: '/usr/local/bin/fish' })).code).toBe(0);
    // The newline setup had to add after the last line stays, as for .zshrc.
    expect(readFileSync(file, 'utf8')).toBe(`${mine}\n`);
    expect(modeOf(file)).toBe(0o644);
  });

  it("writes bash's line to ~/.bashrc, which a real bash reads (outside tmux: nothing), and --undo gives it back", async () => {
    const rc = join(home, '.bashrc');
    const mine = 'HISTSIZE=5000\n';
    writeFileSync(rc, mine);
    const r = json(await setup(['--json'], { SHELL: '/bin/bash' }));
    const line = `[[ -n $TMUX ]] && source ${join(ROOT, 'shell', 'tmux-run.bash')}`;
    expect(r.rc).toMatchObject({ shell: 'bash', file: rc, status: 'added', line });
    expect(readFileSync(rc, 'utf8')).toBe(mine + rcBlock(shellNamed('bash')!, line));
    const bash = spawnSync('bash', ['-i', '-c', 'echo "ok $HISTSIZE"'], {
      env: { PATH: box.env.PATH, HOME: home, TERM: 'xterm-256color' },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect([bash.status, bash.stdout]).toEqual([0, 'ok 5000\n']);
    expect(bash.stderr).not.toMatch(/tmux-run/);
    expect((await setup(['--undo', '--shell', 'bash'])).code).toBe(0);
    expect(readFileSync(rc, 'utf8')).toBe(mine);
  });

  it('refuses a shell it does not know, naming the three, and needs none with --no-rc', async () => {
    const sh = await setup([], { SHELL: '/bin/sh' });
    expect(sh.code).toBe(2);
    expect(sh.stderr).toBe(
      "tmux-run: setup: $SHELL is /bin/sh, and tmux-run enrolls panes of zsh, bash, fish: name one with --shell, or leave start-up files alone with --no-rc (see 'tmux-run setup --help')\n",
    );
    const tcsh = await setup(['--shell', 'tcsh']);
    expect(tcsh.code).toBe(2);
    expect(tcsh.stderr).toMatch(/^tmux-run: setup: unknown shell 'tcsh' \(tmux-run enrolls panes of zsh, bash, fish\)/);
    expect((await setup([])).stderr).toMatch(/\$SHELL is not set/);
    const none = await setup(['--no-rc', '--json'], { SHELL: '/bin/sh' });
    expect(none.code).toBe(0);
    expect(json(none).rc).toBeNull();
    expect((await setup(['--no-rc', '--shell', 'fish'])).code).toBe(2);
    expect(existsSync(join(home, '.config', 'fish'))).toBe(false);
  });

  it('keeps --zshrc FILE and --no-zshrc (zsh whatever $SHELL says); --rc FILE is the general name', async () => {
    const own = join(home, 'my-zshrc');
    const r = json(await setup(['--zshrc', own, '--json'], { SHELL: '/usr/bin/fish' }));
    expect(r.rc).toMatchObject({ shell: 'zsh', file: own, status: 'added' });
    expect(r.zshrc).toEqual(r.rc);
    expect(readFileSync(own, 'utf8')).toMatch(/^\[\[ -n \$TMUX \]\] && source \S+\/shell\/tmux-run\.zsh$/m);
    const other = join(home, 'conf.fish');
    expect(json(await setup(['--rc', other, '--shell', 'fish', '--json'])).rc).toMatchObject({ file: other });
    expect(readFileSync(other, 'utf8')).toBe(rcBlock(FISH, FISH_LINE));
    expect(json(await setup(['--no-zshrc', '--json'], { SHELL: '/usr/bin/fish' })).rc).toBeNull();
    expect((await setup(['--rc', own, '--zshrc', own])).code).toBe(2);
  });
});

describe('tmux-run setup --write vscode', () => {
  const userFile = (base: string) => join(base, 'Code', 'User', 'mcp.json');

  it("writes the user profile's mcp.json outside a workspace (0600), never ~/.vscode/mcp.json", async () => {
    mkdirSync(join(home, '.vscode', 'extensions'), { recursive: true }); // VS Code's own folder in HOME
    const r = json(await setup(['--write', 'vscode', '--no-rc', '--json'], {}, home));
    expect(r.clients).toMatchObject([{ client: 'vscode', file: userFile(join(home, '.config')), status: 'added' }]);
    expect(modeOf(userFile(join(home, '.config')))).toBe(0o600);
    expect(existsSync(join(home, '.vscode', 'mcp.json'))).toBe(false);
    // A folder that is no workspace (no .vscode/, no .git): the user profile, under XDG_CONFIG_HOME.
    const xdg = join(home, 'xdg');
    const p = json(await setup(['--write', 'vscode', '--no-rc', '--json'], { XDG_CONFIG_HOME: xdg }));
    expect(p.clients[0]).toMatchObject({ file: userFile(xdg), status: 'added' });
    const servers = (JSON.parse(readFileSync(userFile(xdg), 'utf8')) as { servers: Record<string, { type: string }> })
      .servers;
    expect(servers['tmux-run']?.type).toBe('stdio');
    expect(existsSync(join(project, '.vscode'))).toBe(false);
  });

  it("writes a workspace's .vscode/mcp.json (0644) in a repository's top folder or one with .vscode/", async () => {
    mkdirSync(join(project, '.git'));
    const r = json(await setup(['--write', 'vscode', '--no-rc', '--json']));
    expect(r.clients[0]).toMatchObject({ file: join(project, '.vscode', 'mcp.json'), status: 'added' });
    expect(modeOf(join(project, '.vscode', 'mcp.json'))).toBe(0o644);
    const other = join(home, 'other');
    mkdirSync(join(other, '.vscode'), { recursive: true });
    const o = json(await setup(['--write', 'vscode', '--no-rc', '--json'], {}, other));
    expect(o.clients[0]).toMatchObject({ file: join(other, '.vscode', 'mcp.json'), status: 'added' });
    expect(existsSync(userFile(join(home, '.config')))).toBe(false);
  });
});
