// The helper's protocol over an in-memory transport pair: authorization refusals, and real runs of
// /bin/sh in the state the shell reports (the shell's side is a stand-in that answers `ask`).
import { mkdtempSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HelperService } from '../../helper/service.js';
import { memoryPair, type Transport } from '../../src/core/protocol/transport.js';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import { RunJournal } from '../../src/core/enrollment/run-journal.js';
import type { Binding } from '../../src/core/protocol/token.js';
import { bindingFor as fixtureBinding, fakeRecord, runRequest } from './fixtures.js';
import type { AskResult } from '../../helper/shell/shell.js';
import type { Reply } from '../../src/core/protocol/messages.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { signHeld, type HeldOp } from '../../src/core/protocol/token.js';

const secret = Buffer.alloc(32, 9);
let dir: string;
let service: HelperService;
let askAnswer: AskResult;
let notices: string[];

const record = fakeRecord(secret, { pane_id: '%7' });

const bindingFor = (script: string, over: Partial<Binding> = {}): Binding => fixtureBinding(record, script, over);

/** Sends one request over a fresh in-memory pair and collects replies until a final one. */
function request(message: unknown): Promise<Reply[]> {
  const [client, helperSide] = memoryPair();
  service.attach(helperSide);
  return new Promise((resolve) => {
    const got: Reply[] = [];
    client.onmessage = (m) => {
      got.push(m as Reply);
      if (['done', 'error', 'pong', 'revoked', 'runs'].includes((m as Reply).type)) resolve(got);
    };
    client.send(message);
  });
}

function runMessage(script: string, b: Binding = bindingFor(script), key: Buffer = secret) {
  return runRequest(record, key, script, b);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tmux-run-unit-'));
  askAnswer = { ok: true, snapshot: { cwd: dir, env: { PATH: '/usr/bin:/bin', GREETING: 'hi' } }, approval: 'auto' };
  notices = [];
  service = new HelperService({
    record,
    secret,
    shell: {
      ask: () => Promise.resolve(askAnswer),
      notify: (t: string) => notices.push(t),
      revoked: () => {},
      mode: 'auto',
    },
    audit: new AuditLog(join(dir, 'state', 'audit.jsonl')),
    journal: new RunJournal(join(dir, 'journal.runs')),
    log: () => {},
    onRevoke: () => {},
    alive: () => true,
  });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const last = (r: Reply[]): Reply => r[r.length - 1]!;

/** A request's signature about held runs, for this record, now. */
function heldAuth(op: HeldOp, runId: string) {
  const fields = {
    server_generation: record.server_generation,
    pane_id: record.pane_id,
    enrollment_generation: record.enrollment_generation,
    process_generation: record.process_generation,
    issued_at: Date.now(),
  };
  return { ...fields, token: signHeld(secret, op, runId, fields) };
}

describe('helper service over an in-memory pair', () => {
  it('runs an authorized script in the snapshot cwd and environment', async () => {
    const r = await request(runMessage('echo "$GREETING from $PWD"; exit 4'));
    expect(r.map((x) => x.type)).toEqual(['queued', 'started', 'done']);
    const done = last(r) as Extract<Reply, { type: 'done' }>;
    expect(done.completion).toEqual({ state: 'exited', exit_status: 4, signal: null });
    expect(done.stdout.toString()).toBe(`hi from ${dir}\n`);
    expect(notices.some((n) => n.includes('started'))).toBe(true);
  });

  it('refuses a token signed with another secret, an altered script, other generations, replays and stale tokens', async () => {
    const marker = join(dir, 'ran');
    const script = `touch ${marker}`;
    const cases: Array<[unknown, string]> = [
      [runMessage(script, bindingFor(script), Buffer.alloc(32, 1)), 'unauthorized'],
      [{ ...runMessage(script), script: `${script} ` }, 'unauthorized'],
      [runMessage(script, bindingFor(script, { pane_id: '%8' })), 'stale_generation'],
      [runMessage(script, bindingFor(script, { enrollment_generation: 'f'.repeat(32) })), 'stale_generation'],
      [runMessage(script, bindingFor(script, { process_generation: 'f'.repeat(32) })), 'stale_generation'],
      [runMessage(script, bindingFor(script, { issued_at: Date.now() - 10 * 60_000 })), 'expired'],
    ];
    for (const [msg, code] of cases) {
      const r = await request(msg);
      expect(last(r)).toMatchObject({ type: 'error', code, ran: false });
    }
    const once = runMessage('true');
    expect(last(await request(once)).type).toBe('done');
    expect(last(await request(once))).toMatchObject({ type: 'error', code: 'replayed' });
    expect(existsSync(marker)).toBe(false);
  });

  it('answers a malformed request with one error and closes', async () => {
    const r = await request({ type: 'run', script: 'true' });
    expect(last(r)).toMatchObject({ type: 'error', code: 'bad_request' });
  });

  it('refuses when the editor is not empty, and runs nothing', async () => {
    askAnswer = { ok: false, reason: 'editor_not_empty' };
    const marker = join(dir, 'ran');
    expect(last(await request(runMessage(`touch ${marker}`)))).toMatchObject({
      type: 'error',
      code: 'editor_not_empty',
      ran: false,
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('stops a run whose output passes its limit and says so', async () => {
    const b = bindingFor('yes', { stdout_limit: 1000 });
    const r = await request(runMessage('yes', b));
    const e = last(r) as Extract<Reply, { type: 'error' }>;
    expect(e).toMatchObject({ code: 'output_limit_exceeded', ran: true });
    expect(e.completion?.state).toBe('signaled');
    expect(e.message).toMatch(/tmux-run stopped/);
  });

  it('cancels a queued run when its caller goes away, so it never runs', async () => {
    const first = request(runMessage('sleep 0.3'));
    const marker = join(dir, 'queued-ran');
    const [client, helperSide] = memoryPair();
    service.attach(helperSide);
    client.send(runMessage(`touch ${marker}`));
    await new Promise((r) => setTimeout(r, 50));
    client.close();
    expect(last(await first).type).toBe('done');
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(marker)).toBe(false);
  });
});

// Keep the Transport type referenced for readers: the pair implements it.
export type { Transport };

describe('helper service checks of its own', () => {
  it('refuses a signed script with NUL or over 65536 bytes, though the broker never sends one', async () => {
    for (const script of ['echo a\0b', 'é'.repeat(33000)]) {
      const r = await request(runMessage(script));
      expect(last(r)).toMatchObject({ type: 'error', code: 'invalid_arguments', ran: false });
    }
  });

  it('refuses unread a request read after its take-by time (its caller gave it up), and takes one read in time', async () => {
    const marker = join(dir, 'late');
    const late = await request({ ...runMessage(`touch ${marker}`), take_by: monotonicMs() - 1 });
    expect(late.map((x) => x.type)).toEqual(['error']);
    expect(last(late)).toMatchObject({ code: 'expired', ran: false });
    const list = await request({ type: 'list', auth: heldAuth('list', ''), take_by: monotonicMs() - 1 });
    expect(last(list)).toMatchObject({ type: 'error', code: 'expired' });
    const inTime = await request({ ...runMessage('echo ok'), take_by: monotonicMs() + 60_000 });
    expect(last(inTime)).toMatchObject({ type: 'done' });
    expect(existsSync(marker)).toBe(false);
  });
});
