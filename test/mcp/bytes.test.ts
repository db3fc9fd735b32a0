// The snapshot carries bytes, not text (docs/tools.md, `tmux_run`): an exported value and a cwd that are
// not UTF-8 reach the run exactly as the person's zsh has them, seen byte for byte with `od`; and
// an exported value the kernel cannot pass to a program is named (never shown) in the refusal.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, ok, setupFixture } from './support.js';

let fx: Fixture;
let parent: string;
beforeAll(async () => {
  fx = await setupFixture();
  parent = mkdtempSync(join(tmpdir(), 'tmux-run-bytes-'));
});
afterAll(async () => {
  await fx?.close();
  rmSync(parent, { recursive: true, force: true });
});

/** The hex bytes `od` prints for what the script writes, as one string. */
const hex = (stdout: string): string => stdout.trim().split(/\s+/).join(' ');

describe('the snapshot as bytes', () => {
  it('hands an exported value that is not UTF-8 to the run byte for byte', async () => {
    await fx.pane.run(`export BAD=$'\\xff\\xfe ok'`);
    try {
      const d = ok(await fx.run('printf %s "$BAD" | od -An -tx1'));
      expect(hex(d.stdout.data)).toBe('ff fe 20 6f 6b');
      // The other exports are still there, as the shell has them.
      expect(ok(await fx.run('printf %s "$HOME"')).stdout.data).not.toBe('');
    } finally {
      await fx.pane.run('unset BAD');
    }
  });

  it('runs in a current directory whose name is not UTF-8', async () => {
    await fx.pane.run(`cd '${parent}' && mkdir $'lat\\xe9n' && cd $'lat\\xe9n'`);
    try {
      const d = ok(await fx.run('pwd | od -An -tx1; printf %s "$PWD" | od -An -tx1 >&2; touch here'));
      const want = [...Buffer.from(`${parent}/lat\xe9n\n`, 'latin1')].map((b) => b.toString(16).padStart(2, '0'));
      expect(hex(d.stdout.data)).toBe(want.join(' '));
      expect(hex(d.stderr.data)).toBe(want.slice(0, -1).join(' '));
      expect(ok(await fx.run('ls')).stdout.data).toBe('here\n');
    } finally {
      await fx.pane.run(`cd '${parent}'`);
    }
  });

  it('names an exported value too big for the kernel, without its value, and runs nothing', async () => {
    const marker = fx.marker();
    await fx.pane.run(`export HUGE_ONE=$(printf 'v%.0s' {1..140000})`);
    try {
      const { s } = await fx.call({ target: fx.target(), script: `touch '${marker}'` });
      expect(s.ok).toBe(false);
      expect(s.error.code).toBe('spawn_failed');
      expect(s.error.message).toContain('"HUGE_ONE" is 140009 bytes');
      expect(s.error.message).toContain('E2BIG');
      expect(s.error.message).not.toContain('vvvv');
    } finally {
      await fx.pane.run('unset HUGE_ONE');
    }
    // (A later run, once the variable is gone, proves the queue went on and the script never ran.)
    await fx.assertNothingRan(`touch '${marker}'`, marker);
  });
});
