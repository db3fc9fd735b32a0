// shell/tmux-run.zsh and src/core/enrollment/layout.ts describe the same registry: the same directory
// mode, the same channel and record file names, read from the snippet's text. The directory the
// snippet picks is asked of a real zsh in test/enroll/snippet-dir.test.ts (zsh is integration).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CHANNEL_PREFIX,
  ZSH_CHANNEL_SUFFIXES,
  RECORD_SUFFIX,
  REGISTRY_DIR_MODE,
  SOCKET_SUFFIX,
  STATUS_SUFFIX,
} from '../../src/core/enrollment/layout.js';

const snippetPath = fileURLToPath(new URL('../../shell/tmux-run.zsh', import.meta.url));
const snippet = readFileSync(snippetPath, 'utf8');
const code = snippet
  .split('\n')
  .filter((l) => !/^\s*#/.test(l))
  .join('\n');
const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

/** The suffixes the snippet puts after a channel path (`$base.req`, `$_tmux_run_base.{req,rsp}`). */
function channelSuffixes(text: string): { used: string[]; removedAtTeardown: string[] } {
  const used = [...text.matchAll(/\$(?:base|_tmux_run_base)\.([a-z]+)\b/g)].map((m) => `.${m[1]}`);
  const braces = [...text.matchAll(/\$_tmux_run_base\.\{([a-z,]+)\}/g)].flatMap((m) =>
    m[1]!.split(',').map((s) => `.${s}`),
  );
  const single = [...text.matchAll(/zf_rm -f -- \$_tmux_run_base\.([a-z]+)\b/g)].map((m) => `.${m[1]}`);
  return { used: sorted([...used, ...braces]), removedAtTeardown: sorted([...braces, ...single]) };
}

describe('shell/tmux-run.zsh agrees with src/core/enrollment/layout.ts', () => {
  it('uses exactly the channel suffixes, and removes all of them at teardown (the log kept only after a failed start)', () => {
    const { used, removedAtTeardown } = channelSuffixes(code);
    expect(used).toEqual(sorted(ZSH_CHANNEL_SUFFIXES));
    expect(removedAtTeardown).toEqual(sorted(ZSH_CHANNEL_SUFFIXES));
    // The log is the one file a teardown may keep, and only when asked to (a failed start).
    expect(code).toContain('[[ $1 == keep-log ]] || zf_rm -f -- $_tmux_run_base.log');
    expect([...code.matchAll(/_tmux_run_teardown keep-log/g)]).toHaveLength(1);
    expect(code).toMatch(/_tmux_run_failed\(\) \{[^}]*_tmux_run_teardown keep-log/);
    // What the shell made before the helper starts is removed when it cannot go on.
    expect(code).toContain('zf_rm -f -- $base.req $base.rsp $base.log');
    expect(code).toContain(`base=$dir/${CHANNEL_PREFIX}`);
  });

  it('the suffix reader sees a suffix the TypeScript does not know', () => {
    expect(channelSuffixes('zf_rm -f -- $base.req $base.tmp; zf_rm -- $_tmux_run_base.{req,rsp}').used).toEqual([
      '.req',
      '.rsp',
      '.tmp',
    ]);
  });

  it('names records, sockets and statuses with the same suffixes', () => {
    const names = sorted(
      [...code.matchAll(/\$(?:enrollment|_tmux_run_enrollment)(?:\.([a-z]+)|\.\{([a-z,]+)\})/g)].flatMap((m) =>
        (m[1] ?? m[2]!).split(',').map((s) => `.${s}`),
      ),
    );
    expect(names).toEqual(sorted([RECORD_SUFFIX, SOCKET_SUFFIX, STATUS_SUFFIX]));
  });

  it('creates the directory with the same mode and refuses the same other bits', () => {
    expect(code).toContain(`zf_mkdir -m ${REGISTRY_DIR_MODE.toString(8)} -- $dir`);
    expect(code).toContain(`(st[mode] & 8#0${(0o777 & ~REGISTRY_DIR_MODE).toString(8)}) != 0`);
  });
});
