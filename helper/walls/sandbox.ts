// The sandbox decision for one run (loaded only when the shell asks for a sandbox): is bwrap here
// and able (probed once per helper), what the walls are (plan, facts, arguments), and which walls
// the run goes into: the pane's kept-alive ones when the policy is the same, new ones otherwise.
// Paths are worked on as latin1 strings (one character per byte: helper/shell/snapshot.ts bytesOf),
// so a directory whose name is not UTF-8 is walled as itself; messages are UTF-8 again.
import { dirname } from 'node:path';
import { homedir, userInfo } from 'node:os';
import { probeBwrap, type ProbeResult } from '../../src/core/os/bwrap.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { monotonicMs } from '../../src/core/protocol/trace.js';
import { planSandbox, refuseWritable, sandboxArgs, type SandboxPlan, type SandboxValue } from './policy.js';
import { gatherFacts, pathFacts, type FactMemo } from './facts.js';
import { bytesOf, type Snapshot } from '../shell/snapshot.js';
import type { RunLauncher } from '../run/run-spec.js';
import { terminalEnv } from '../run/terminal.js';
import type { InputMode } from '../../src/core/protocol/messages.js';
import { Walls } from './walls.js';
import { waiterProgram } from './waiter.js';

let probed: Promise<ProbeResult> | undefined;

/** bwrap's probe, once per helper while it succeeds (a failure is probed again at the next run). */
function available(): Promise<ProbeResult> {
  probed ??= probeBwrap().then((r) => {
    if (!r.ok) probed = undefined;
    return r;
  });
  return probed;
}

/** A UTF-8 string as latin1 (its bytes, one character each), and back. */
const bytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
const text = (s: string): string => Buffer.from(s, 'latin1').toString('utf8');

export type SandboxDecision =
  { ok: true; value: Exclude<SandboxValue, 'off'>; launcher: RunLauncher } | { ok: false; message: string };

/** The walls' waiter, chosen once per helper (helper/walls/waiter.ts). */
let chosenWaiter: ReturnType<typeof waiterProgram> | undefined;

/** The pane's current walls (a helper serves one pane); a changed policy retires them. */
let current: Walls | undefined;

/**
 * How old a guess's facts may be when the run's decision takes them: the guess is made while the
 * shell is asked for its state (about 1.5 ms here), so its facts are as fresh as a decision made
 * after the answer; a later answer (ask mode: the person took their time) is decided anew.
 */
const GUESS_FRESH_MS = 20;

type Inputs = ReturnType<typeof bytesOf>;
type Walled = { ok: true; args: string[] } | { ok: false; message: string };

/** The last sandboxed run's state (as bytes), what the next run's guess is made from. */
let last: Inputs | undefined;
/** The walls decided ahead for the plan of `last`, while the shell was asked (guessAhead). */
let guessed: { plan: string; at: number; walls: Walled } | undefined;

function plan(b: Inputs, record: EnrollmentRecord, auditPath: string): ReturnType<typeof planSandbox> {
  return planSandbox(b.shell ?? {}, b.cwd, b.env, {
    registryDir: bytes(dirname(record.socket)),
    tmuxSocket: bytes(record.tmux_socket),
    // A far helper's (set by the remote snippet for it alone: helper/far-helper.ts).
    ...(process.env.TMUX_RUN_REMOTE ? { forwardDir: bytes(process.env.TMUX_RUN_REMOTE) } : {}),
    auditPath: bytes(auditPath),
    userHome: bytes(safeHome()),
    uid: process.getuid?.() ?? 0,
  });
}

/** bwrap's arguments for a plan, from the facts as they are now (or why there are none). */
function wallsOf(p: SandboxPlan): Walled {
  // A writable tree that may not be (the cwd at ~ or /) is refused before the search for repositories.
  // One decision's facts: each path resolved once, however many plan paths share it as a parent.
  const memo: FactMemo = new Map();
  const paths = pathFacts(p, memo);
  const refused = refuseWritable(p, paths);
  if (refused) return { ok: false, message: text(refused.message) };
  const walls = sandboxArgs(p, gatherFacts(p, undefined, memo, paths));
  return walls.ok ? { ok: true, args: walls.args } : { ok: false, message: text(walls.message) };
}

/**
 * Decides, while the shell is being asked for its state (the helper waits on it then), the walls
 * of the pane's last sandboxed run's plan: the next run's decision takes them when its plan is the
 * same and they are fresh (GUESS_FRESH_MS), else it decides anew. Nothing is started here.
 */
export function guessAhead(record: EnrollmentRecord, auditPath: string): void {
  guessed = undefined;
  if (!last) return;
  const planned = plan(last, record, auditPath);
  if (!planned.ok) return;
  const at = monotonicMs();
  guessed = { plan: JSON.stringify(planned.plan), at, walls: wallsOf(planned.plan) };
}

/** The pane's last run had no sandbox: the next run's walls are not guessed. */
export function noGuess(): void {
  last = undefined;
  guessed = undefined;
}

/** The walls for a run in the state the shell reported, or why it cannot run sandboxed. */
export async function sandboxFor(
  snapshot: Snapshot,
  record: EnrollmentRecord,
  auditPath: string,
  input?: InputMode,
): Promise<SandboxDecision> {
  const b = bytesOf(snapshot);
  const guess = guessed;
  guessed = undefined;
  const planned = plan(b, record, auditPath);
  if (!planned.ok) return { ok: false, message: text(planned.message) };
  last = b;
  const probe = await available();
  if (!probe.ok) return { ok: false, message: probe.reason };
  const waiter = (chosenWaiter ??= waiterProgram());
  if (typeof waiter === 'string') return { ok: false, message: waiter };
  const walls =
    guess && monotonicMs() - guess.at <= GUESS_FRESH_MS && guess.plan === JSON.stringify(planned.plan)
      ? guess.walls
      : wallsOf(planned.plan);
  if (!walls.ok) return walls;
  // The policy is every argument but the cwd (the last two, `--chdir DIR`), which each run brings.
  const args = walls.args.slice(0, -2);
  const cwd = walls.args.at(-1)!;
  const key = args.join('\0');
  if (!current || current.closed || current.key !== key) {
    current?.retire();
    current = new Walls(probe.bwrap, args, dirname(record.socket), waiter, key);
  }
  const w = current;
  // A terminal goes into the walls with its run, or the run is refused (never unwalled).
  if (input === 'terminal' && w.terminals !== true) return { ok: false, message: w.terminals };
  return {
    ok: true,
    value: planned.plan.value,
    launcher: {
      pgid: w.pgid,
      launch: (script, umask, events, stdin) =>
        w.run(
          {
            script,
            umask,
            cwd,
            env: stdin?.kind === 'terminal' ? terminalEnv(b.env) : b.env,
            ...(stdin ? { input: stdin } : {}),
          },
          events,
        ),
    },
  };
}

/** The helper's user's home in the password database (looked up once: every run asked for it). */
let home: string | undefined;
function safeHome(): string {
  if (home === undefined) {
    try {
      home = userInfo().homedir;
    } catch {
      home = homedir();
    }
  }
  return home;
}
