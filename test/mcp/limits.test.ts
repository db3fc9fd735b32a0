// Limits at and over their edges: output per stream (stdout_limit, stderr_limit) and the
// script's size in bytes of UTF-8 (not characters) and its content (no NUL).
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, ok, setupFixture } from './support.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await setupFixture();
});
afterAll(async () => {
  await fx?.close();
});

/** A script printing exactly n bytes ('a') on the given stream. */
const emit = (n: number, stream: 'stdout' | 'stderr' = 'stdout'): string =>
  `head -c ${n} /dev/zero | tr '\\0' a${stream === 'stderr' ? ' >&2' : ''}`;

/** Checks an output overflow: observed, authorized, with a completion, saying tmux-run stopped it. */
function expectOverflow(s: Record<string, any>, which: 'stdout' | 'stderr'): void {
  expect(s.ok, JSON.stringify(s).slice(0, 500)).toBe(false);
  const e = s.error;
  expect(e.code).toBe('output_limit_exceeded');
  expect(e.delivery).toBe('observed');
  expect(e.message).toContain(which);
  expect(e.message).toMatch(/tmux-run stopped/);
  expect(e.effects.state).toBe('known');
  expect(e.effects.authorization).toMatchObject({
    state: 'authorized',
    pane_id: fx.listing.pane_id,
    enrollment_generation: fx.listing.enrollment_generation,
  });
  const c = e.effects.completion;
  // Stopped by tmux-run (SIGTERM), or the script had already finished on its own.
  if (c.state === 'signaled') {
    expect([15, 9]).toContain(c.signal);
    expect(e.message).toContain(`signal ${c.signal}, a signal sent by tmux-run`);
  } else {
    expect(c).toMatchObject({ state: 'exited', signal: null });
    expect(e.message).not.toMatch(/exited \d+, a signal/);
  }
}

describe('output limits', () => {
  it.each([
    ['stdout', 1000],
    ['stderr', 1000],
    ['stdout', 65536],
    ['stderr', 65536],
  ] as const)('%s of exactly its limit (%i) succeeds', async (which, n) => {
    const key = which === 'stdout' ? 'stdout_limit' : 'stderr_limit';
    const d = ok(await fx.run(emit(n, which), n === 65536 ? {} : { [key]: n }));
    expect(d[which].bytes).toBe(n);
    expect(d[which].data).toBe('a'.repeat(n));
    expect(d[which].truncated).toBe(false);
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
  });

  it.each([
    ['stdout', 1000],
    ['stderr', 1000],
    ['stdout', 65536],
    ['stderr', 65536],
  ] as const)('%s of one byte over its limit (%i) fails with output_limit_exceeded', async (which, n) => {
    const key = which === 'stdout' ? 'stdout_limit' : 'stderr_limit';
    expectOverflow(await fx.run(emit(n + 1, which), n === 65536 ? {} : { [key]: n }), which);
  });

  it('stops a script that keeps writing past its limit (signaled by tmux-run)', async () => {
    const s = await fx.run('while :; do echo yes; done', { stdout_limit: 100 });
    expectOverflow(s, 'stdout');
    expect(s.error.effects.completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
  });

  it('stops the whole group on overflow, background jobs included', async () => {
    const flag = fx.marker();
    const s = await fx.run(`(sleep 1; touch '${flag}') & head -c 50 /dev/zero >&2; sleep 5`, { stderr_limit: 10 });
    expectOverflow(s, 'stderr');
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(flag)).toBe(false);
  });

  it('limit 0 with no output succeeds', async () => {
    const d = ok(await fx.run('true', { stdout_limit: 0, stderr_limit: 0 }));
    expect(d.stdout.bytes).toBe(0);
    expect(d.stderr.bytes).toBe(0);
  });

  it('limit 0 with one byte fails', async () => {
    expectOverflow(await fx.run('printf x', { stdout_limit: 0 }), 'stdout');
    expectOverflow(await fx.run('printf x >&2', { stderr_limit: 0 }), 'stderr');
  });

  it('the largest limits carry 262144 bytes per stream, also as base64', async () => {
    const d = ok(
      await fx.run("head -c 262144 /dev/zero | tr '\\0' '\\377'; head -c 262144 /dev/zero | tr '\\0' b >&2", {
        stdout_limit: 262144,
        stderr_limit: 262144,
      }),
    );
    expect(d.stdout.encoding).toBe('base64');
    expect(d.stdout.bytes).toBe(262144);
    expect(Buffer.from(d.stdout.data, 'base64').equals(Buffer.alloc(262144, 0xff))).toBe(true);
    expect(d.stderr).toMatchObject({ encoding: 'utf-8', bytes: 262144 });
  });

  it.each([{ stdout_limit: 262145 }, { stderr_limit: -1 }, { stdout_limit: 1.5 }, { stderr_limit: '10' }])(
    'refuses limits outside the schema (%o) as invalid_arguments',
    async (extra) => {
      const marker = fx.marker();
      const script = `touch '${marker}'`;
      const { s } = await fx.call({ target: fx.target(), script, ...extra });
      expect(s.ok).toBe(false);
      expect(s.error).toMatchObject({
        code: 'invalid_arguments',
        delivery: 'not_sent',
        effects: { state: 'none', authorization: null, completion: { state: 'unobserved' } },
      });
      await fx.assertNothingRan(script, marker);
    },
  );
});

describe('script limits', () => {
  it('accepts a script under 65536 bytes of UTF-8 (30000 × é = 60000 bytes)', async () => {
    const marker = fx.marker();
    const script = `touch '${marker}' # ${'é'.repeat(30000)}`;
    expect(Buffer.byteLength(script)).toBeLessThan(65536);
    const d = ok(await fx.run(script));
    expect(d.completion.exit_status).toBe(0);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
  });

  it('accepts a script of exactly 65536 bytes', async () => {
    const marker = fx.marker();
    const head = `touch '${marker}' # `;
    const script = head + 'x'.repeat(65536 - Buffer.byteLength(head));
    expect(Buffer.byteLength(script)).toBe(65536);
    ok(await fx.run(script));
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
  });

  it.each([
    [
      'over 65536 bytes of UTF-8 but under 65536 characters (33000 × é)',
      (m: string) => `touch '${m}' # ${'é'.repeat(33000)}`,
    ],
    [
      'of 65537 ASCII characters',
      (m: string) => {
        const h = `touch '${m}' # `;
        return h + 'x'.repeat(65537 - h.length);
      },
    ],
    ['containing NUL', (m: string) => `touch '${m}'\0 echo after-nul`],
    ['containing NUL at its end', (m: string) => `touch '${m}'\0`],
    ['holding an unpaired surrogate (no UTF-8 form)', (m: string) => `touch '${m}' # \uD800`],
  ])('refuses a script %s: invalid_arguments, not sent, nothing ran', async (_what, make) => {
    const marker = fx.marker();
    const script = make(marker);
    const { s } = await fx.call({ target: fx.target(), script });
    expect(s.ok).toBe(false);
    expect(s.error).toMatchObject({
      code: 'invalid_arguments',
      delivery: 'not_sent',
      effects: { state: 'none', authorization: null, completion: { state: 'unobserved' } },
    });
    expect(s.error.message).toMatch(/script/);
    expect(s.error.message).not.toContain(marker);
    expect(s.error.message).not.toContain('touch');
    expect(s.error.message).not.toContain('éé');
    expect(s.error.message).not.toContain('xxxx');
    expect(s.error.message).not.toContain('after-nul');
    await fx.assertNothingRan(script, marker);
  });
});
