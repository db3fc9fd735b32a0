// The product never types into a terminal: with a logging `tmux` first on PATH for the pane (so
// the helper uses it), the MCP server and the CLI, a whole session (enroll, list, runs that
// succeed, fail and are refused, revoke) asks tmux only read-only questions, and nothing the
// agent sends (script, limits, target) ever reaches a tmux command line. The test harness's own
// tmux calls (typing like a person) use tmux by absolute path, never the shim.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lab/cli.js';
import { markerPath, uniqueToken } from '../../lab/markers.js';
import { callRun, listedPanes, type McpHandle } from '../../lab/mcp.js';
import { productEnv, SNIPPET } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';

/** The only tmux commands the product may run (plus `tmux -V`, which runs none). */
const READ_ONLY = new Set(['display-message', 'list-panes']);
/** Options of tmux itself that take a value. */
const WITH_VALUE = new Set(['-S', '-L', '-f', '-c', '-T']);

/** The tmux command an argv runs (undefined for `tmux -V` and the like), and any `;`-chained ones. */
function commandsOf(argv: string[]): string[] {
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith('-')) i += WITH_VALUE.has(argv[i]!) ? 2 : 1;
  const out: string[] = [];
  if (i < argv.length) out.push(argv[i]!);
  argv.forEach((a, j) => {
    if ((a === ';' || a.endsWith(';')) && j + 1 < argv.length) out.push(argv[j + 1]!);
  });
  return out;
}

describe('the product never sends keys', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let shimDir: string;
  let logDir: string;
  let path: string;

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    shimDir = join(server.baseDir, 'shim');
    logDir = join(server.baseDir, 'tmux-calls');
    mkdirSync(shimDir, { mode: 0o700 });
    mkdirSync(logDir, { mode: 0o700 });
    const real = spawnSync('/bin/sh', ['-c', 'command -v tmux'], { env: { PATH: server.env.PATH! } })
      .stdout.toString()
      .trim();
    expect(real).toMatch(/^\//);
    // One file per invocation (NUL-separated argv), written before tmux runs.
    writeFileSync(
      join(shimDir, 'tmux'),
      `#!/bin/sh\nf=$(mktemp '${logDir}/call.XXXXXXXX') && printf '%s\\0' "$@" > "$f"\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    path = `${shimDir}:${server.env.PATH}`;
    mcp = await scope.startMcp({ env: { PATH: `${shimDir}:${process.env.PATH}` } });
  });

  /** Every tmux invocation the shim saw, as argv arrays. */
  const calls = (): string[][] =>
    readdirSync(logDir).map((n) => readFileSync(join(logDir, n), 'utf8').split('\0').slice(0, -1));

  it("a whole session asks tmux only read-only questions, none carrying the agent's input", async () => {
    const env = productEnv(server, { PATH: `${shimDir}:${process.env.PATH}` });
    // tmux gives a new pane its client's PATH whatever -e says, so the pane's zshrc puts the shim first.
    const pane = await server.newPane({
      env: { TMUX_RUN_TMUX: undefined },
      zshrc: `PROMPT='$ '\nexport PATH='${path}'\n`,
    });
    expect(await pane.run('command -v tmux')).toBe(join(shimDir, 'tmux'));
    await pane.run(`source ${SNIPPET}`);
    const listing = await waitUntil(
      async () => (await listedPanes(mcp.client)).find((p) => p.pane_id === pane.id),
      10_000,
      'the pane to be listed',
    );
    expect(
      calls().some((argv) => argv.includes('display-message') && argv.includes(pane.id)),
      'the helper asked tmux through the shim',
    ).toBe(true);

    // Agent-controlled text, recognisable wherever it lands.
    const secretWord = `agent-${uniqueToken()}`;
    const marker = markerPath(server);
    const scripts = [
      `echo ${secretWord}`,
      `echo ${secretWord} >&2; exit 7`,
      `printf '%s' "$(printf '\\033]0;${secretWord}\\007')"; touch '${marker}'`,
    ];
    for (const script of scripts) {
      const r = await callRun(mcp.client, listing, script, { stdout_limit: 1234, stderr_limit: 4321 });
      expect(r.structured.error, script).toBeUndefined();
    }
    // Refusals: a stale generation, a half-typed line, a target that is not a pane id.
    expect(
      (await callRun(mcp.client, { pane_id: listing.pane_id, generation: 'f'.repeat(32) }, `echo ${secretWord}`))
        .structured.error.code,
    ).toBe('stale_generation');
    await pane.type(`echo half-${secretWord}`);
    await pane.waitFor((s) => s.endsWith(`$ echo half-${secretWord}`));
    expect((await callRun(mcp.client, listing, `echo ${secretWord}`)).structured.error.code).toBe('editor_not_empty');
    await server.tmux(['send-keys', '-t', pane.id, 'C-u']); // the person clears their line (harness tmux, not the shim)
    await pane.waitForPrompt();
    for (const id of ['%1; rm -rf /', `%1 ${secretWord}`, '$(reboot)', '%1\n%2', '%-1']) {
      const bad = await callRun(mcp.client, { pane_id: id, generation: listing.generation }, `echo ${secretWord}`);
      expect(bad.structured.error, id).toMatchObject({ code: 'invalid_arguments', delivery: 'not_sent' });
    }
    // The CLI: list, log, doctor, then revoke.
    expect((await runCli(['panes'], env)).code).toBe(0);
    expect((await runCli(['panes', '--json'], env)).code).toBe(0);
    expect((await runCli(['log'], env)).code).toBe(0);
    await runCli(['doctor'], env);
    const revoke = await runCli(['revoke', pane.id], env);
    expect(revoke.code, revoke.stderr).toBe(0);
    await waitUntil(
      async () => (await listedPanes(mcp.client)).length === 0,
      10_000,
      'the revoked pane to leave the listing',
    );

    const all = calls();
    // The helper, the broker and the CLI all went through the shim.
    const asked = new Set(all.map((argv) => commandsOf(argv)[0] ?? argv.join(' ')));
    expect([...asked].sort()).toEqual(['-V', 'display-message', 'list-panes']);
    expect(all.length).toBeGreaterThan(5);
    for (const argv of all) {
      const shown = JSON.stringify(argv);
      const commands = commandsOf(argv);
      if (commands.length === 0) expect(argv, shown).toEqual(['-V']);
      for (const c of commands) expect(READ_ONLY.has(c), `tmux ${shown}`).toBe(true);
      expect(
        argv.some((a) =>
          /send-keys|send-prefix|paste-buffer|load-buffer|set-buffer|set-option|respawn|pipe-pane|run-shell|new-window|split-window|kill-/.test(
            a,
          ),
        ),
        shown,
      ).toBe(false);
      // Nothing the agent sent: no script text, no limits, no invented target.
      expect(shown.includes(secretWord), shown).toBe(false);
      expect(shown).not.toMatch(/1234|4321|rm -rf|reboot/);
    }
    // The person's terminal shows none of it, and their history holds only what they typed.
    const screen = await pane.capture();
    expect(screen).not.toContain(secretWord); // the half-typed line was the person's, and they cleared it
    const history = await pane.run('fc -ln 1');
    expect(history).not.toContain(secretWord);
  });
});
