// The helper at the far end of a `tmux-run ssh` session (docs/remote.md): started by the shell's
// snippet as any helper is (the shell channel is the same), but instead of a tmux pane of its own
// host it serves the pane through the session's forwarded socket. It finds that socket by the
// kernel's word (helper/remote/session-socket.ts), says who it is on the control link, takes the
// enrollment record and secret from the local relay (src/remote/relay.ts), and then is the normal
// helper service over each data connection it opens through the forward. No socket of its own
// listens at the far end, and no record is written there: the pane is listed on the local side.
// A login that is not a `tmux-run ssh` session (no socket of its sshd's) ends here, silently.
// It never goes dormant, whatever TMUX_RUN_IDLE says (nothing on the local side could start it
// again): listings say `sleeps_after: never` for a remote pane (src/broker/registry.ts).
import { dirname } from 'node:path';
import type { Socket } from 'node:net';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { channelFiles, checkRegistryDir, journalPath, socketPath } from '../src/core/enrollment/layout.js';
import { removeQuietly, type EnrollmentRecord } from '../src/core/enrollment/record.js';
import { auditPath } from '../src/core/audit/audit-log.js';
import { RunJournal } from '../src/core/enrollment/run-journal.js';
import { bootId, procStat } from '../src/core/os/proc.js';
import { BUILD_ID } from '../src/core/protocol/build.js';
import { encodeFrame } from '../src/core/protocol/framing.js';
import { socketTransport, type Transport } from '../src/core/protocol/transport.js';
import { MAX_REQUEST_FRAME } from '../src/core/protocol/limits.js';
import {
  checkRelay,
  LINK_VERSION,
  onThisClock,
  type FarMessage,
  type Hello,
} from '../src/core/enrollment/remote-link.js';
import { monotonicMs } from '../src/core/protocol/trace.js';
import { HelperService } from './service.js';
import { EnrollError, endings, ignoreTerminalSignals, openShell, parseArgs, type Args, type Ending } from './start.js';
import type { Shell } from './shell/shell.js';
import { log } from './log/log.js';
import { connectVia, findSessionSocket } from './remote/session-socket.js';
import { FarScreen } from './remote/far-screen.js';
import { FarAuditLog } from './remote/far-audit.js';
import { watchLink } from './remote/link-watch.js';

/** The line the snippet knows as "not a tmux-run ssh session": it then says nothing (shell/tmux-run.zsh). */
export const NOT_A_SESSION = 'not a tmux-run ssh session';
/** How long the relay may take to welcome the far end. */
const WELCOME_MS = 10_000;
const WATCH_MS = 500;

/** The far end's start, in order: the channel, the session's socket, the welcome, the service. */
async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // The screen check (fish; bash without its builtin) reads the pane through the relay.
  const screen = new FarScreen();
  const shell = await openShell(args, screen);
  const ending = endings(args, shell);
  shell.onclose = () => ending.abandon('the shell closed its channel');
  process.on('SIGTERM', () => ending.abandon('stopped before it was ready'));
  if (process.ppid !== args.shellPid) ending.fail(`the helper's parent is not the shell that started it`);
  const shellStat = procStat(args.shellPid);
  if (!shellStat) return ending.abandon('its shell is gone');
  const dir = dirname(args.base);
  try {
    checkRegistryDir(dir);
  } catch (e) {
    ending.fail((e as Error).message);
  }
  const forwardDir = process.env.TMUX_RUN_REMOTE ?? '';
  const found = forwardDir ? await findSessionSocket(forwardDir, shellStat.ppid, process.getuid?.() ?? -1) : undefined;
  if (!found) {
    // Another login (a plain ssh, a nested shell): nothing to enroll and nothing to say.
    log(`${NOT_A_SESSION}: no socket in ${forwardDir} is listened on by this shell's sshd (pid ${shellStat.ppid})`);
    process.exit(0);
  }
  const hello: Hello = {
    type: 'hello',
    version: LINK_VERSION,
    build: BUILD_ID,
    hostname: readHostname(),
    boot: bootId(),
    shell: shell.name,
    editor_check: shell.editorCheck,
    ...(shell.editorCheckReason !== undefined ? { editor_check_reason: shell.editorCheckReason } : {}),
    shell_pid: args.shellPid,
    shell_start: shellStat.startTicks,
    helper_pid: process.pid,
  };
  found.socket.write(encodeFrame(hello));
  const control = socketTransport(found.socket);
  const welcome = await welcomed(control, ending);
  const record = welcome.record;
  if (record.shell_pid !== args.shellPid || record.helper_pid !== process.pid || record.build !== BUILD_ID)
    ending.fail('the local side sent a record for another shell, helper or build');
  serve({
    args,
    shell,
    ending,
    control,
    record,
    key: welcome.key,
    clockOffsetMs: welcome.clockOffsetMs,
    screen,
    path: found.path,
    sshdPid: shellStat.ppid,
    dir,
  });
}

function readHostname(): string {
  try {
    return readFileSync('/proc/sys/kernel/hostname', 'utf8').trim() || hostname();
  } catch {
    return hostname();
  }
}

/** The relay's answer to the hello: the welcome, or the reason it refused (said in the pane). */
function welcomed(
  control: Transport,
  ending: Ending,
): Promise<{ record: EnrollmentRecord; key: string; clockOffsetMs: number }> {
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => ending.fail(`the local side did not answer within ${WELCOME_MS / 1000} s`),
      WELCOME_MS,
    );
    control.onclose = () => {
      clearTimeout(timer);
      ending.fail('the local side closed the link before it welcomed this shell');
    };
    control.onmessage = (raw) => {
      clearTimeout(timer);
      const m = checkRelay(raw);
      if (m?.type === 'welcome') resolve({ record: m.record, key: m.key, clockOffsetMs: monotonicMs() - m.now });
      else
        ending.fail(
          m?.type === 'refused' ? m.message : 'the local side answered in a way this helper does not understand',
        );
    };
  });
}

interface Serving {
  args: Args;
  shell: Shell;
  ending: Ending;
  control: Transport;
  record: EnrollmentRecord;
  key: string;
  /** This host's CLOCK_MONOTONIC minus the local side's (onThisClock). */
  clockOffsetMs: number;
  screen: FarScreen;
  path: string;
  sshdPid: number;
  dir: string;
}

/** Whether the enrolled shell still runs: the same process (start time) and program (an `exec` is another shell). */
function shellAlive(args: Args): () => boolean {
  const at = procStat(args.shellPid);
  return () => {
    const st = procStat(args.shellPid);
    return (
      process.ppid === args.shellPid &&
      st !== undefined &&
      st.state !== 'Z' &&
      st.startTicks === at?.startTicks &&
      st.image === at.image
    );
  };
}

/** Opens one more data link through the forward (its listener checked again), served by the helper service. */
async function openDataLink(cx: Serving, service: HelperService, links: Set<Socket>): Promise<void> {
  const s = await connectVia(cx.path, cx.sshdPid);
  if (!s) return;
  links.add(s);
  s.once('close', () => links.delete(s));
  s.write(encodeFrame({ type: 'data', key: cx.key } satisfies FarMessage));
  service.attach(onThisClock(socketTransport(s, MAX_REQUEST_FRAME), cx.clockOffsetMs));
}

/** Enrolled: the service over data connections the relay asks for, until the session or the shell ends. */
function serve(cx: Serving): void {
  const { args, shell, control, record } = cx;
  const enrollment = record.enrollment_generation;
  const journal = new RunJournal(journalPath(cx.dir, enrollment));
  const alive = shellAlive(args);
  const links = new Set<Socket>();
  let ended = false;
  const audit = new FarAuditLog(auditPath(), control);
  const service: HelperService = new HelperService({
    // The record names the local side's registry socket; what the helper derives from it (the
    // sandbox hides the registry and puts its walls' socket beside it) is this host's directory.
    record: { ...record, socket: socketPath(cx.dir, enrollment) },
    secret: Buffer.from(record.secret, 'hex'),
    shell,
    journal,
    log,
    audit,
    alive,
    onRevoke: () => end('revoked'),
  });
  const end = (why: string): void => {
    if (ended) return;
    ended = true;
    log(`ending: ${why}`);
    journal.remove();
    if (why === 'revoked') service.shutdown('the enrollment was revoked', 'revoked');
    else service.shutdown(why === 'the ssh session ended' ? 'the ssh session ended' : 'the enrolled shell has exited');
    const finish = (): void => {
      audit.flush();
      control.close();
      for (const l of links) l.destroy();
      channelFiles(args.base).forEach(removeQuietly);
      shell.close();
      process.exit(0);
    };
    // A stopped run reports first (its reply still goes through an open link), then the links close.
    void Promise.race([service.idle(), new Promise((r) => setTimeout(r, 3000))]).then(() => setTimeout(finish, 20));
  };
  const openData = (): Promise<void> => (ended ? Promise.resolve() : openDataLink(cx, service, links));
  cx.screen.link(control);
  const link = watchLink((ms) => {
    log(`the control link was silent for ${Math.round(ms / 1000)} s: taking the session as over`);
    end('the ssh session ended');
  });
  control.onmessage = (raw) => {
    link.heard();
    const m = checkRelay(raw);
    if (m?.type === 'want') void openData();
    else cx.screen.answer(m);
  };
  control.onclose = () => {
    cx.screen.close();
    end('the ssh session ended');
  };
  shell.onclose = () => end('the shell closed its channel');
  process.removeAllListeners('SIGTERM');
  process.on('SIGTERM', () => end('SIGTERM'));
  setInterval(() => {
    if (!alive()) end('the shell is gone');
  }, WATCH_MS);
  control.send({ type: 'ready' } satisfies FarMessage);
  void openData();
  shell.ready(record.generation, enrollment);
  log(`enrolled through ${cx.path} (generation ${record.generation}, shell ${args.shellPid})`);
}

/** The far end's helper's life (helper/helper.ts hands over to it when TMUX_RUN_REMOTE is set). */
export function runFarHelper(): void {
  ignoreTerminalSignals();
  // A failed start was said in the pane (ending.fail); the helper exits once it is.
  process.on('uncaughtException', (e) => {
    if (e instanceof EnrollError) return;
    log(`unexpected error: ${e.stack ?? e.message}`);
    process.exit(1);
  });
  main().catch((e: Error) => {
    if (e instanceof EnrollError) return;
    log(`fatal: ${e.stack ?? e.message}`);
    process.exit(1);
  });
}
