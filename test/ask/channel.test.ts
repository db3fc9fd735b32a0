// The helper's side of the ask-mode exchange over real FIFOs: the test plays the shell (reads the
// helper's lines, writes answers) and checks that only the answer to the question being asked,
// in the right order, lets a run through.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZshShell } from '../../helper/shell/zsh/zsh.js';
import type { AskOptions } from '../../helper/shell/shell.js';
import { PREVIEW_SEPARATOR } from '../../helper/shell/approval.js';
import { waitUntil } from '../../lab/waiting.js';

let dir: string;
let base: string;
let channel: ZshShell;
let fds: number[];
let fromHelper: string[];
let reader: Socket;

const RUN = {
  runId: 'c'.repeat(32),
  digest: 'd'.repeat(64),
  script: 'echo one\n\tprintf "\\033]0;x\\007"\u202Eevil\necho three\n',
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tmux-run-channel-'));
  base = join(dir, 'ch');
  expect(spawnSync('mkfifo', ['-m', '600', `${base}.req`, `${base}.rsp`]).status).toBe(0);
  // Like the shell: both FIFOs open read-write, so neither side ever blocks or sees EOF.
  const req = openSync(`${base}.req`, constants.O_RDWR | constants.O_NONBLOCK);
  const rsp = openSync(`${base}.rsp`, constants.O_RDWR | constants.O_NONBLOCK);
  fds = [rsp];
  fromHelper = [];
  let buf = '';
  reader = new Socket({ fd: req, readable: true, writable: false });
  reader.setEncoding('utf8');
  reader.on('data', (c: string) => {
    buf += c;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      fromHelper.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  channel = new ZshShell(base);
  channel.open();
});

afterEach(() => {
  channel.close();
  reader.destroy();
  for (const fd of fds) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a line on the response FIFO, as the shell would. */
const answer = (line: string): void => {
  writeSync(fds[0]!, `${line}\n`);
};
/** The next line the helper wrote that starts with `prefix`. */
const line = (prefix: string): Promise<string> =>
  waitUntil(() => fromHelper.find((l) => l.startsWith(prefix)), 5000, `a ${prefix} line`);
const snapshot = (nonce: string): void => writeFileSync(`${base}.env`, `${nonce}\0${dir}\0A=1`);

async function ask(opts: AskOptions = {}, timeoutMs = 1000) {
  fromHelper.length = 0;
  const events: string[] = [];
  const result = channel.ask(timeoutMs, { run: RUN, onAwaiting: () => events.push('awaiting'), ...opts });
  const nonce = (await line('Q ')).slice(2);
  return { result, nonce, events };
}

describe('ask mode on the shell channel', () => {
  it('A puts the wait on the person, sends the details once, and K y approves', async () => {
    const { result, nonce, events } = await ask();
    answer(`A ${nonce} 120`);
    const p = await line('P ');
    expect(events).toEqual(['awaiting']);
    const [, n, run, digest, bytes, lines, ...rest] = p.split(' ');
    expect([n, run, digest, bytes, lines]).toEqual([
      nonce,
      RUN.runId,
      RUN.digest,
      String(Buffer.byteLength(RUN.script)),
      '3',
    ]);
    const shown = rest.join(' ').split(PREVIEW_SEPARATOR);
    // The script's own text `\033` stays as typed; the real tab and U+202E are shown escaped.
    expect(shown).toEqual(['echo one', '\\x09printf "\\033]0;x\\007"\\u{202e}evil', 'echo three']);
    // Nothing a terminal could act on, nothing invisible.
    expect(p).not.toMatch(/[\u0000-\u001e\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    // Longer than the editor's 1 s: the person's time is not a busy shell.
    await new Promise((r) => setTimeout(r, 1300));
    snapshot(nonce);
    answer(`K ${nonce} y`);
    expect(await result).toMatchObject({ ok: true, approval: 'yes', snapshot: { cwd: dir, env: { A: '1' } } });
  });

  it('maps a, always, denied and approval_timeout', async () => {
    for (const [reply, expected] of [
      ['K %n a', { ok: true, approval: 'always' }],
      ['K %n always', { ok: true, approval: 'remembered' }],
      ['D %n denied', { ok: false, reason: 'denied', timeoutS: 7 }],
      ['D %n approval_timeout', { ok: false, reason: 'approval_timeout', timeoutS: 7 }],
    ] as const) {
      const { result, nonce } = await ask();
      answer(`A ${nonce} 7`);
      await line('P ');
      snapshot(nonce);
      answer(reply.replace('%n', nonce));
      expect(await result, reply).toMatchObject(expected);
    }
  });

  it('ignores answers for any other nonce, and takes no answer out of order', async () => {
    // An answer for an earlier question (or a guessed one) is ignored; the question stays open.
    const first = await ask();
    answer(`K ${first.nonce}`);
    snapshot(first.nonce);
    expect(await first.result).toMatchObject({ ok: true, approval: 'auto' });
    const { result, nonce } = await ask();
    answer(`A ${nonce} 60`);
    await line('P ');
    for (const forged of [`K ${first.nonce} y`, `K ${'0'.repeat(32)} y`, `D ${first.nonce} denied`, 'K', 'y', 'M auto'])
      answer(forged);
    await new Promise((r) => setTimeout(r, 200));
    let settled = false;
    void result.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    // After a question, a bare K (the auto answer) is not an approval.
    answer(`K ${nonce}`);
    expect(await result).toMatchObject({ ok: false, reason: 'protocol' });
    expect(await line(`W ${nonce}`)).toBe(`W ${nonce}`);

    // Before a question, an approval or a refusal by the person is not an answer either.
    for (const early of ['K %n y', 'D %n denied']) {
      const q = await ask();
      answer(early.replace('%n', q.nonce));
      expect(await q.result, early).toMatchObject({ ok: false, reason: 'protocol' });
    }
  });

  it('withdraws the question when the run is cancelled, and when its wait ends', async () => {
    const ac = new AbortController();
    const { result, nonce } = await ask({ signal: ac.signal });
    answer(`A ${nonce} 60`);
    await line('P ');
    ac.abort();
    expect(await result).toEqual({ ok: false, reason: 'withdrawn' });
    expect(await line('W ')).toBe(`W ${nonce}`);
    // A yes after the withdrawal reaches nobody.
    snapshot(nonce);
    answer(`K ${nonce} y`);

    // The editor never answered: busy, and the stale question is withdrawn so it is never shown.
    const late = await ask({}, 100);
    expect(await late.result).toEqual({ ok: false, reason: 'timeout' });
    expect(await line('W ')).toBe(`W ${late.nonce}`);
  });

  it('reports the mode the shell last said', async () => {
    expect(channel.mode).toBe('unknown');
    answer('M ask');
    await waitUntil(() => channel.mode === 'ask');
    answer('M auto');
    await waitUntil(() => channel.mode === 'auto');
    answer('M whatever');
    await new Promise((r) => setTimeout(r, 100));
    expect(channel.mode).toBe('auto');
  });
});
