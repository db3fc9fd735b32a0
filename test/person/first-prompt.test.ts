// A first prompt that does not pay for Node: sourced from .zshrc, the snippet starts the helper
// only once the line editor first waits for a key (the first prompt drawn), so no Node runs while
// the shell starts; sourced at a prompt, it starts at once. Proved by structure: the shell's own
// children at its first precmd (none), then the helper after the prompt.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helperChildren, waitListed } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { SNIPPET } from '../../lab/product.js';
import { waitUntil } from '../../lab/waiting.js';

const scope = useServer();

/** A .zshrc that sources the snippet, then notes at its first precmd the shell's children and whether a start waits. */
const zshrc = (file: string, extra = ''): string =>
  [
    "PROMPT='$ '",
    `source ${SNIPPET}`,
    extra,
    `__first() { print -r -- "children=$(</proc/$$/task/$$/children) waiting=\${+_tmux_run_deferred}" > ${file}; precmd_functions=(\${precmd_functions:#__first}) }`,
    'precmd_functions+=(__first)',
    '',
  ].join('\n');

describe('a first prompt that does not pay for Node', () => {
  it('from .zshrc: no helper while the shell starts, the helper once the first prompt is drawn', async () => {
    const server = scope.server;
    const file = join(server.home, 'first-precmd');
    const pane = await server.newPane({ zshrc: zshrc(file) });
    const shellPid = await pane.shellPid();
    const noted = await waitUntil(() => {
      try {
        return readFileSync(file, 'utf8').trim() || undefined;
      } catch {
        return undefined;
      }
    });
    // At the first prompt's precmd (after all of .zshrc), the start still waits and no process runs.
    expect(noted).toBe('children= waiting=1');
    const listing = await waitListed(pane, shellPid);
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    expect(await pane.run('print -r -- ${+_tmux_run_deferred} ${+widgets[_tmux_run_deferred_start]}')).toBe('0 1');
    // Silently: the start drew nothing on the screen.
    expect(await pane.capture()).not.toContain('tmux-run');
    await pane.run('tmux_run_unenroll');
    expect(await pane.run('print -r -- ${+widgets[_tmux_run_deferred_start]}')).toBe('0');
  });

  it('unenrolled from .zshrc before the first prompt: nothing starts, nothing is left', async () => {
    const server = scope.server;
    const file = join(server.home, 'first-precmd-unenrolled');
    const pane = await server.newPane({ zshrc: zshrc(file, 'tmux_run_unenroll >/dev/null') });
    const shellPid = await pane.shellPid();
    await waitUntil(() => {
      try {
        return readFileSync(file, 'utf8').trim() || undefined;
      } catch {
        return undefined;
      }
    });
    expect(readFileSync(file, 'utf8').trim()).toBe('children= waiting=0');
    await pane.run('true');
    expect(helperChildren(shellPid)).toEqual([]);
    expect(
      await pane.run('print -r -- ${+_tmux_run_base} ${+functions[TRAPINT]} ${#${(M)precmd_functions:#*tmux_run*}}'),
    ).toBe('0 0 0');
  });
});
