// The sandbox decision for one run (loaded only when the shell asks for a sandbox): is bwrap here
// and able (probed once per helper), what the walls are (plan, facts, arguments), and how the run
// is wrapped: bwrap, then the waiter that reports the script's own exit status or signal.
import { dirname } from 'node:path';
import { homedir, userInfo } from 'node:os';
import type { Completion } from '../../src/protocol/messages.js';
import {
  completionOfStatus,
  parseWaiter,
  PERL,
  probeBwrap,
  WAITER,
  WAITER_GO,
  WAITER_READY,
  type ProbeResult,
} from '../../src/os/bwrap.js';
import type { EnrollmentRecord } from '../../src/enrollment/record.js';
import { childrenOf, procArgv } from '../../src/os/proc.js';
import { planSandbox, refuseWritable, sandboxArgs, type SandboxValue } from './policy.js';
import { gatherFacts, pathFacts } from './facts.js';
import type { Snapshot } from '../shell/snapshot.js';
import type { RunWrap } from '../run/runner.js';

let probed: Promise<ProbeResult> | undefined;

/** bwrap's probe, once per helper while it succeeds (a failure is probed again at the next run). */
function available(): Promise<ProbeResult> {
  probed ??= probeBwrap().then((r) => {
    if (!r.ok) probed = undefined;
    return r;
  });
  return probed;
}

/** The run's completion from what the waiter reported, or undefined when the script never started. */
export function wrappedCompletion(status: string, code: number | null, signal: number | null): Completion | undefined {
  const report = parseWaiter(status);
  if (!report.started) return undefined;
  if (report.status !== undefined) return completionOfStatus(report.status);
  // The waiter itself was stopped (the run's group was cancelled): bwrap's own end is all there is.
  return signal !== null
    ? { state: 'signaled', exit_status: null, signal }
    : { state: 'exited', exit_status: code ?? 0, signal: null };
}

/** The waiter's pid as the helper sees it (bwrap's child), or undefined while bwrap still makes the sandbox. */
export function waiterPid(bwrapPid: number): number | undefined {
  return childrenOf(bwrapPid).find((pid) => {
    const argv = procArgv(pid);
    return argv?.[0] === PERL && argv[1] === '-e' && argv[2] === WAITER;
  });
}

export type SandboxDecision =
  { ok: true; value: Exclude<SandboxValue, 'off'>; wrap: RunWrap } | { ok: false; message: string };

/** The walls for a run in the state the shell reported, or why it cannot run sandboxed. */
export async function sandboxFor(
  snapshot: Snapshot,
  record: EnrollmentRecord,
  auditPath: string,
): Promise<SandboxDecision> {
  const planned = planSandbox(snapshot.shell ?? {}, snapshot.cwd, snapshot.env, {
    registryDir: dirname(record.socket),
    tmuxSocket: record.tmux_socket,
    auditPath,
    userHome: safeHome(),
    uid: process.getuid?.() ?? 0,
  });
  if (!planned.ok) return planned;
  const probe = await available();
  if (!probe.ok) return { ok: false, message: probe.reason };
  // A writable tree that may not be (the cwd at ~ or /) is refused before the search for repositories.
  const paths = pathFacts(planned.plan);
  const refused = refuseWritable(planned.plan, paths);
  if (refused) return refused;
  const walls = sandboxArgs(planned.plan, gatherFacts(planned.plan, undefined, paths));
  if (!walls.ok) return walls;
  return {
    ok: true,
    value: planned.plan.value,
    wrap: {
      file: probe.bwrap,
      args: [...walls.args, '--', PERL, '-e', WAITER],
      completion: wrappedCompletion,
      handshake: { ready: WAITER_READY, go: WAITER_GO },
      termPid: waiterPid,
    },
  };
}

function safeHome(): string {
  try {
    return userInfo().homedir;
  } catch {
    return homedir();
  }
}
