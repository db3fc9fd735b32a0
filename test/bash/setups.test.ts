// The set-ups people run in bash keep working while the pane is enrolled, and the handler's
// commands are never taken for theirs: bash-preexec itself, 0.5.0, 0.6.0 and master
// (test/bash/fixtures, MIT, each with its licence beside it), a bash-preexec-like DEBUG trap and PROMPT_COMMAND hook,
// `set -o vi`, a WINCH trap of the person's, PROMPT_COMMAND as an array, `set -u -o pipefail`.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callRun } from '../../lab/mcp.js';
import { useServerAndBroker } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';
import { checkRunResult } from '../mcp/support.js';
import { BASH_SNIPPET, bashPane, enrolledBash, ok, refusal, type BashPaneOptions } from './support.js';
import { waitListed } from '../../lab/enrollment.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

const file = useServerAndBroker();

const lines = (path: string): string[] =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];

async function enrolled(opts: BashPaneOptions) {
  const { pane, listing } = await enrolledBash(file.server, opts);
  const run = async (script: string) => checkRunResult((await callRun(file.mcp.client, listing, script)).result);
  return { pane, listing, run };
}

describe('set-ups people run in bash', () => {
  it('a bash-preexec-like set-up: its preexec fires for typed commands, never for a run', async () => {
    const log = join(file.server.home, 'preexec.log');
    // What bash-preexec does: a hook last in PROMPT_COMMAND arms it; the DEBUG trap's first
    // firing after a prompt is the typed command's preexec, unless it is a PROMPT_COMMAND entry.
    const rc = [
      `__pe_log=${log}`,
      '__pe_armed=',
      '__pe_debug() {',
      '  [[ -n $__pe_armed ]] || return 0',
      '  __pe_armed=',
      "  [[ $'\\n'$PROMPT_COMMAND$'\\n' == *$'\\n'\"$BASH_COMMAND\"$'\\n'* ]] && return 0",
      '  echo "preexec $BASH_COMMAND" >> "$__pe_log"',
      '}',
      '__pe_arm() { __pe_armed=1; }',
      'trap \'__pe_debug "$_"\' DEBUG',
    ].join('\n');
    const { pane, run } = await enrolled({ rc });
    // Installed after the snippet's hook, as bash-preexec installs itself at the first prompt.
    await pane.run("PROMPT_COMMAND+=$'\\n'__pe_arm");
    await pane.run('echo typed-one');
    for (let i = 0; i < 3; i++) ok(await run('echo from-a-run'));
    await pane.run('echo typed-two');
    expect(lines(log)).toEqual(['preexec echo typed-one', 'preexec echo typed-two']);
  });

  // bash-preexec as people install it: 0.5.0, 0.6.0 and master (66e913c, what its README's curl
  // line fetches: PS0 and function substitution in bash 5.3, `__bp_install "$_"`), each with
  // `set -o vi` and a WINCH trap of the person's, sourced before and after the snippet.
  const versions = ['0.5.0', '0.6.0', 'master-66e913c'];
  for (const version of versions)
    for (const order of ['before', 'after'] as const) {
      it(`bash-preexec ${version} (the real file) sourced ${order} tmux-run, set -o vi, a WINCH trap: every typed command reaches preexec_functions and precmd_functions once, the first included, never a run`, async () => {
        const log = join(file.server.home, `bp-${version}-${order}.log`);
        const bp = [
          'set -o vi',
          "trap '__winch_seen=1' WINCH",
          `source ${join(FIXTURES, `bash-preexec-${version}.sh`)}`,
          `__bp_log() { printf 'preexec %s\\n' "$1" >> ${log}; }`,
          `__bp_log_precmd() { printf 'precmd\\n' >> ${log}; }`,
          'preexec_functions+=(__bp_log)',
          'precmd_functions+=(__bp_log_precmd)',
        ];
        const tr = `source ${BASH_SNIPPET}`;
        const pane = await bashPane(file.server, { rc: (order === 'before' ? [...bp, tr] : [tr, ...bp]).join('\n') });
        const listing = await waitListed(pane, await pane.shellPid());
        expect(listing.editor_check).toBe('exact');
        const run = async (script: string) => checkRunResult((await callRun(file.mcp.client, listing, script)).result);
        // Runs at the new pane's first prompt, before anything is typed, then between commands.
        for (let i = 0; i < 2; i++) ok(await run('echo from-a-run'));
        await pane.run('echo typed-first');
        for (let i = 0; i < 3; i++) ok(await run('echo from-a-run'));
        await pane.run('echo typed-second');
        await pane.run('echo typed-third');
        ok(await run('echo from-a-run'));
        await pane.run('echo typed-fourth');
        expect(lines(log)).toEqual([
          'precmd',
          'preexec echo typed-first',
          'precmd',
          'preexec echo typed-second',
          'precmd',
          'preexec echo typed-third',
          'precmd',
          'preexec echo typed-fourth',
          'precmd',
        ]);
      });
    }

  it('set -o vi: runs start at an empty line, a typed one is refused in both modes', async () => {
    const { pane, run } = await enrolled({ rc: 'set -o vi' });
    ok(await run('true'));
    await pane.type('echo vi-typed');
    await pane.waitFor((s) => s.split('\n').at(-1) === '$ echo vi-typed');
    expect(refusal(await run('true')).code).toBe('editor_not_empty');
    await file.server.tmux(['send-keys', '-t', pane.id, 'Escape']);
    expect(refusal(await run('true')).code).toBe('editor_not_empty');
    await file.server.tmux(['send-keys', '-t', pane.id, 'A']);
    await pane.type('-done', { enter: true });
    await pane.waitFor((s) => /^vi-typed-done$/m.test(s));
    await pane.waitForPrompt();
    ok(await run('true'));
  });

  it("a WINCH trap of the person's still fires on a resize, and runs still start", async () => {
    const log = join(file.server.home, 'winch.log');
    const { pane, run } = await enrolled({ rc: `trap 'echo winch >> ${log}' WINCH` });
    ok(await run('true'));
    const before = lines(log).length;
    await file.server.tmux(['resize-window', '-t', pane.id, '-x', '140', '-y', '35']);
    await waitUntil(() => lines(log).length > before);
    ok(await run('true'));
    // The trap set after enrollment replaces tmux-run's: it is chained again at the next prompt.
    await pane.run(`trap 'echo again >> ${log}' WINCH`);
    ok(await run('true'));
    await file.server.tmux(['resize-window', '-t', pane.id, '-x', '120', '-y', '30']);
    await waitUntil(() => lines(log).includes('again'));
  });

  it('PROMPT_COMMAND as an array: enrolled, runs, and put back as it was by tmux_run_unenroll', async () => {
    const { pane, run } = await enrolled({ rc: 'PROMPT_COMMAND=("$PROMPT_COMMAND" ": second")' });
    ok(await run('true'));
    expect(await pane.run('echo ${#PROMPT_COMMAND[@]} "${PROMPT_COMMAND[1]}"')).toBe('3 : second');
    expect(await pane.run('tmux_run_unenroll')).toMatch(/unenrolled/);
    expect(await pane.run('echo ${#PROMPT_COMMAND[@]} "${PROMPT_COMMAND[1]}"')).toBe('2 : second');
  });

  it('PROMPT_COMMAND as a string, set -u and pipefail: nothing breaks, nothing is printed', async () => {
    // (The harness's own marker counts from a variable set -u would find unset.)
    const rc = '__harness_prompts=0\nPROMPT_COMMAND="$PROMPT_COMMAND; : person"\nset -u -o pipefail';
    const { pane, run } = await enrolled({ rc });
    ok(await run('true'));
    await pane.type('echo x');
    expect(refusal(await run('true')).code).toBe('editor_not_empty');
    await file.server.tmux(['send-keys', '-t', pane.id, 'C-u']);
    await pane.waitForPrompt();
    ok(await run('true'));
    expect(await pane.run('echo "$PROMPT_COMMAND" | grep -c _tmux_run_prompt')).toBe('1');
    expect(await pane.run('tmux_run_unenroll')).toMatch(/unenrolled/);
    expect(await pane.run('echo "[$PROMPT_COMMAND]"')).toMatch(/; : person\]$/);
    expect(await pane.capture()).not.toMatch(/unbound variable|tmux_run.*error/);
  });
});
