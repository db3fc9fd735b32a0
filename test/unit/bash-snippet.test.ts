// shell/tmux-run.bash and src/core/enrollment/layout.ts describe the same channel: the snippet uses
// exactly the signal-woken channel's suffixes, removes all of them at teardown (the log kept only
// after a failed start), and makes the directory as zsh's does (its mode the helper checks).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHANNEL_PREFIX, REGISTRY_DIR_MODE, BASH_CHANNEL_SUFFIXES } from '../../src/core/enrollment/layout.js';

// The snippet, the rest of it that it reads once its helper speaks (shell/tmux-run-serve.bash) and the
// helper's start that its child reads (shell/tmux-run-start.bash).
const text = ['tmux-run.bash', 'tmux-run-serve.bash', 'tmux-run-start.bash']
  .map((f) => readFileSync(fileURLToPath(new URL(`../../shell/${f}`, import.meta.url)), 'utf8'))
  .join('\n');
const code = text
  .split('\n')
  .filter((l) => !/^\s*#/.test(l))
  .join('\n');
const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

describe('shell/tmux-run.bash agrees with src/core/enrollment/layout.ts', () => {
  it('uses exactly the signal-woken channel suffixes and its check file, and removes all of them at teardown', () => {
    const single = [...code.matchAll(/\$(?:base|_tmux_run_base|\{_tmux_run_base\})\.([a-z]+)\b/g)].map(
      (m) => `.${m[1]}`,
    );
    const braces = [...code.matchAll(/"\$_tmux_run_base"\.\{([a-z,]+)\}/g)].flatMap((m) =>
      m[1]!.split(',').map((s) => `.${s}`),
    );
    expect(sorted([...single, ...braces])).toEqual(sorted(BASH_CHANNEL_SUFFIXES));
    expect(sorted([...braces, '.log'])).toEqual(sorted(BASH_CHANNEL_SUFFIXES));
    expect(code).toContain('[[ ${1-} == keep-log ]] || files+=("$_tmux_run_base.log")');
    expect(code).toContain(`base=$dir/${CHANNEL_PREFIX}`);
  });

  it('creates the directory with the same mode, and leaves its other bits to the helper (no stat fork)', () => {
    expect(code).toContain(`mkdir -m ${REGISTRY_DIR_MODE.toString(8)} -- "$dir"`);
    expect(code).not.toMatch(/\bstat\b/);
  });

  it('starts the helper as bash', () => {
    expect(code).toMatch(/"\$main" "\$base" "\$\$" bash </);
  });
});
