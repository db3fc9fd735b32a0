// npm run demo: a private tmux server, a zsh pane enrolled by its .zshrc (no keys are typed),
// tmux-run-mcp driven by the MCP SDK's client: list panes, run a script, print the results,
// then clean everything up.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const base = mkdtempSync(join(tmpdir(), 'tmux-run-demo-'));
const home = join(base, 'home');
const runDir = join(base, 'run');
const sock = join(base, 'tmux.sock');
mkdirSync(home, { mode: 0o700 });
mkdirSync(runDir, { mode: 0o700 });
writeFileSync(join(home, '.zshrc'), `PROMPT='demo$ '\nsource ${root}/shell/tmux-run.zsh\n`);
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  ZDOTDIR: home,
  TERM: 'xterm-256color',
  LANG: 'C.UTF-8',
  SHELL: 'zsh',
  TMUX_RUN_DIR: runDir,
  XDG_STATE_HOME: join(home, '.local', 'state'),
};
const tmux = (...args) => execFileSync('tmux', ['-S', sock, '-f', '/dev/null', ...args], { env, encoding: 'utf8' });
const say = (s) => process.stdout.write(`${s}\n`);

let client;
try {
  say(`# 1. A private tmux server (${sock}) with one zsh pane whose .zshrc sources shell/tmux-run.zsh`);
  tmux('new-session', '-d', '-x', '120', '-y', '30', '-s', 'demo', '-c', home, 'zsh', '-i');
  client = new Client({ name: 'tmux-run-demo', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(root, 'bin', 'tmux-run-mcp.js'), '--enable-tool', 'tmux_run'],
      env: { PATH: env.PATH, HOME: home, TMUX_RUN_DIR: runDir, XDG_STATE_HOME: env.XDG_STATE_HOME },
      stderr: 'ignore',
    }),
  );
  say('\n# 2. tmux-run-mcp --enable-tool tmux_run, tools/list:');
  say((await client.listTools()).tools.map((t) => `   ${t.name}`).join('\n'));

  let panes = [];
  const deadline = Date.now() + 15000;
  while (panes.length === 0 && Date.now() < deadline) {
    panes = (await client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })).structuredContent.panes;
    if (panes.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  if (panes.length === 0) throw new Error('the demo pane was not enrolled within 15 s');
  say('\n# 3. tmux_enrolled_panes:');
  say(JSON.stringify(panes, null, 2));

  const pane = panes[0];
  const script = 'echo "hello from pane $TMUX_PANE in $PWD, as $(id -un)"; echo "to stderr" >&2; exit 3';
  say(
    `\n# 4. tmux_run {target: {kind: "pane", id: "${pane.pane_id}", generation: "${pane.generation}"}, script: ${JSON.stringify(script)}}`,
  );
  const result = await client.callTool({
    name: 'tmux_run',
    arguments: { target: { kind: 'pane', id: pane.pane_id, generation: pane.generation }, script },
  });
  say(JSON.stringify(result.structuredContent, null, 2));
  say('\n# 5. The same call with a stale generation is refused, never retargeted:');
  const stale = await client.callTool({
    name: 'tmux_run',
    arguments: { target: { kind: 'pane', id: pane.pane_id, generation: '0'.repeat(32) }, script: 'echo never' },
  });
  say(JSON.stringify(stale.structuredContent, null, 2));
  say('\n# 6. The pane itself (nothing was typed into it):');
  say(tmux('capture-pane', '-p', '-t', pane.pane_id).trimEnd());
} catch (e) {
  process.exitCode = 1;
  process.stderr.write(`demo failed: ${e.message}\n`);
} finally {
  await client?.close().catch(() => {});
  try {
    tmux('kill-server');
  } catch {
    /* already gone */
  }
  await new Promise((r) => setTimeout(r, 300));
  rmSync(base, { recursive: true, force: true });
  say('\n# 7. Cleaned up: tmux server killed (the helper exits with its shell), temporary files removed.');
}
