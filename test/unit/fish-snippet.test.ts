// shell/tmux-run.fish and the rest of it that it reads once its helper speaks (shell/tmux-run-serve.fish),
// read as text: fish's conventions (every function prefixed and with a --description, globals
// prefixed), the channel's files as src/core/enrollment/layout.ts names them (and all removed at
// teardown), and nothing that would type into a pane or talk to tmux.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHANNEL, RECORD_SUFFIX, SIGNAL_CHANNEL_SUFFIXES, SOCKET_SUFFIX } from '../../src/core/enrollment/layout.js';

const read = (f: string): string =>
  readFileSync(fileURLToPath(new URL(`../../shell/${f}`, import.meta.url)), 'utf8')
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n');
/** The snippet sourced, whose first and last lines matter. */
const snippet = read('tmux-run.fish');
const code = `${snippet}\n${read('tmux-run-serve.fish')}`;
const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

describe('shell/tmux-run.fish', () => {
  it('defines only prefixed functions, each with a --description', () => {
    const defs = [...code.matchAll(/^\s*function (\S+)(.*)$/gm)];
    expect(defs.length).toBeGreaterThan(20);
    for (const [, name, rest] of defs) {
      expect(name, name).toMatch(/^_?tmux_run_[a-z_]+$/);
      expect(rest, name).toMatch(/--description '[^']+'/);
    }
    expect([...new Set(defs.filter(([, name]) => !name!.startsWith('_')).map(([, name]) => name))]).toEqual([
      'tmux_run_unenroll',
    ]);
  });

  it('sets only prefixed globals (and fish umask, put back after each write)', () => {
    const globals = [...code.matchAll(/\bset -g (\S+)/g)].map((m) => m[1]!);
    for (const g of globals) expect(g, g).toMatch(/^(_tmux_run_[a-z_]+|umask)$/);
    const sets = [...code.matchAll(/set -g umask 0077/g)].length;
    expect(sets).toBeGreaterThan(0);
    expect([...code.matchAll(/set -g umask \$saved/g)].length).toBeGreaterThanOrEqual(sets);
  });

  it("uses the signal-woken channel's suffixes and removes every one at teardown", () => {
    const used = [...code.matchAll(/\$(?:base|_tmux_run_base)\.([a-z]+)\b/g)].map((m) => `.${m[1]}`);
    const braces = [...code.matchAll(/\$_tmux_run_base\.\{([a-z,]+)\}/g)].flatMap((m) =>
      m[1]!.split(',').map((s) => `.${s}`),
    );
    expect(sorted([...used, ...braces])).toEqual(sorted(SIGNAL_CHANNEL_SUFFIXES));
    // Teardown: every suffix in its brace list, and the log unless it is kept (a failed start).
    expect(sorted([...braces, CHANNEL.log])).toEqual(sorted(SIGNAL_CHANNEL_SUFFIXES));
    expect(code).toContain('test "$keep" = keep-log; or set -a files $_tmux_run_base.log');
    expect(code).toContain(`$_tmux_run_enrollment.{${RECORD_SUFFIX.slice(1)},${SOCKET_SUFFIX.slice(1)}}`);
  });

  it('never types into a pane nor asks tmux anything, and returns at once, silent, outside interactive fish', () => {
    expect(code).not.toMatch(/(^\s*|[;|(]\s*|\b(?:command|and|or|not)\s+)tmux\s/m);
    expect(code).not.toMatch(/send-keys|paste-buffer|load-buffer/);
    // The first command is the refusal in other shells; enrollment is the last.
    expect(snippet.trim().split('\n')[0]).toMatch(/^test -z "\$FISH_VERSION" && echo "tmux-run: not enrolled:/);
    expect(snippet.trim().split('\n').at(-1)).toBe('_tmux_run_enroll');
    // Outside interactive fish it stops before defining anything, saying nothing.
    const lines = snippet.split('\n');
    const quiet = lines.indexOf('status is-interactive; or return 0');
    expect(quiet).toBeGreaterThan(0);
    expect(lines.slice(0, quiet).some((l) => /^(function|set) /.test(l))).toBe(false);
  });
});
