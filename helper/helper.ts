// The per-pane helper: started by the shell's snippet (shell/tmux-run.zsh, .bash, .fish) with the
// channel path, the shell's pid and its name; publishes the enrollment, serves the broker on a
// 0600 socket, and ends with its shell. helper/main.ts loads this module (from the helper's
// one-file bundle, or as it is) and calls runHelper(); the start-up steps are in helper/start.ts.
import { lstatSync } from 'node:fs';
import type { Server } from 'node:net';
import { channelFiles, journalPath, recordPath, statusPath } from '../src/core/enrollment/layout.js';
import { removeQuietly, writeRecord, type EnrollmentRecord } from '../src/core/enrollment/record.js';
import { AuditLog, auditPath } from '../src/core/audit/audit-log.js';
import { HelperService } from './service.js';
import { StatusPublisher } from './status.js';
import { RunJournal } from '../src/core/enrollment/run-journal.js';
import {
  checkPlace,
  EnrollError,
  endings,
  ignoreTerminalSignals,
  listen,
  liveness,
  makeRecord,
  openShell,
  parseArgs,
  type Args,
  type Ending,
  type Place,
} from './start.js';
import { log } from './log/log.js';
import type { Shell } from './shell/shell.js';
import { wakeEnrollment, wakeRecord } from './wake.js';
import { idleSetting, watchIdle } from './dormancy.js';
import { formatIdle, NEVER_SLEEPS, parseIdle } from '../src/core/enrollment/idle-time.js';
import { runFarHelper } from './far-helper.js';

/** How often the helper checks that its shell (and the tmux server) still exist. */
const WATCH_MS = 500;

// The helper's start, in order: a record (fresh, or the dormant helper's when it wakes), the
// service behind its socket, the socket and the record published, then the enrolled pane's watches.
async function main(): Promise<void> {
  const start = await toRecord();
  const { place, record, ending } = start;
  const enrollment = record.enrollment_generation;
  // Assigned once below; end(), defined first, closes it when it exists.
  // eslint-disable-next-line prefer-const
  let server: Server | undefined;
  const served = serve(start, () => server);
  if (start.woken) removeQuietly(record.socket); // the dormant helper's, if it could not remove it
  ending.made.push(record.socket);
  server = await listen(served.service, record.socket, ending.fail);
  ending.made.push(statusPath(place.dir, enrollment), recordPath(place.dir, enrollment));
  served.status.flush();
  try {
    writeRecord(place.dir, record);
  } catch (e) {
    ending.fail(`cannot write the enrollment record: ${(e as Error).message}`);
  }
  if (ending.failing()) return;
  enrolled(start, served, server);
}

/** What the start knows once the helper has its record. */
interface Started {
  args: Args;
  /** The dormant enrollment this helper wakes, if it does. */
  woken: string | undefined;
  shell: Shell;
  ending: Ending;
  place: Place;
  record: EnrollmentRecord;
  secret: Buffer;
  earlyTerm: () => void;
}

// Before enrollment: the arguments, the shell's channel, the pane's place and the record; a
// failure tells the shell (or not, when it is gone) and removes what the start made.
async function toRecord(): Promise<Started> {
  const args = parseArgs(process.argv.slice(2));
  const woken = wakeEnrollment();
  const shell = await openShell(args);
  const ending = endings(args, shell);
  const { made, abandon, fail } = ending;
  shell.onclose = () => abandon('the shell closed its channel');
  // Until it is enrolled, SIGTERM (the shell gave up waiting, or was interrupted) just undoes.
  const earlyTerm = (): void => {
    log('stopped before it was ready');
    for (const path of made) removeQuietly(path);
    process.exit(0);
  };
  process.on('SIGTERM', earlyTerm);
  internalFail = (e: Error) => fail(`internal error: ${e.message}`);
  if (process.ppid !== args.shellPid && ending.shellGone()) {
    abandon(`its shell (pid ${args.shellPid}) is gone`);
  }
  const place = await checkPlace(args, fail);
  const { record, secret } = woken ? wakeRecord(args, place, woken, fail) : makeRecord(args, place, shell, fail);
  return { args, woken, shell, ending, place, record, secret, earlyTerm };
}

type Served = ReturnType<typeof serve>;

// The service, the pane's status and run journal, and the one end of the enrollment they share
// (revoked, the shell's channel closed; SIGTERM too once enrolled).
function serve(start: Started, server: () => Server | undefined) {
  const { args, shell, place, record, secret } = start;
  const enrollment = record.enrollment_generation;
  const alive = liveness(args, place);
  const journal = new RunJournal(journalPath(place.dir, enrollment));
  const status = new StatusPublisher(place.dir, record, log);
  // Listings say when the pane may go dormant (`sleeps_after`), from its first status on.
  const idle = parseIdle(process.env.TMUX_RUN_IDLE).ms;
  status.idleTime(idle === null ? NEVER_SLEEPS : formatIdle(idle));
  const service: HelperService = new HelperService({
    record,
    secret,
    shell,
    journal,
    log,
    audit: new AuditLog(auditPath()),
    alive,
    onRevoke: () => end('revoked', 0),
    status: (s) => status.set(s),
  });
  const sock = record.socket;
  const end = ender({ base: args.base, dir: place.dir, enrollment, sock, journal, shell, service, status, server });
  shell.onclose = () => end('the shell closed its channel', 0);
  shell.onPromptRefused = (reason) => status.refusePrompt(reason);
  return { alive, journal, status, service, end };
}

// Enrolled: from here on SIGTERM, a vanished shell or record, or an unexpected error ends it
// cleanly; the shell is told it is ready, and an idle pane's helper may go dormant.
function enrolled(start: Started, served: Served, server: Server): void {
  const { args, woken, shell, place, record } = start;
  const { alive, journal, status, service, end } = served;
  const enrollment = record.enrollment_generation;
  setInterval(() => {
    if (!alive()) end('the shell or the tmux server is gone', 0);
    else if (!existsQuiet(recordPath(place.dir, enrollment))) end('the enrollment record was removed', 0);
  }, WATCH_MS);
  process.off('SIGTERM', start.earlyTerm);
  process.on('SIGTERM', () => end('SIGTERM', 0));
  internalFail = (e: Error) => end(`internal error: ${e.stack ?? e.message}`, 1);
  shell.ready(record.generation, enrollment);
  const idleMs = idleSetting(woken !== undefined, (text) => shell.tell(text));
  if (idleMs !== null) {
    watchIdle({
      idleMs,
      hasWork: () => service.hasWork(),
      server,
      sock: record.socket,
      shellPid: args.shellPid,
      log,
      ...sleeper(status, shell, journal),
    });
  }
  // Start-up leaves garbage the helper will never need; collect it once the pane is enrolled.
  setTimeout(() => globalThis.gc?.(), 1000).unref();
  log(`enrolled pane ${place.paneId} (generation ${record.generation}, shell ${args.shellPid}), ${startCost()}`);
}

/** How a helper goes dormant: its status says so, the shell is told, the run journal (empty) goes, it exits. */
function sleeper(status: StatusPublisher, shell: Shell, journal: RunJournal) {
  return {
    sleep: (image: string) => status.sleep(image),
    awake: () => status.awake(),
    tellShell: () => shell.dormant(),
    exit: () => {
      journal.remove();
      shell.onclose = undefined; // the channel stays the shell's: this is no end of the enrollment
      shell.close();
      setTimeout(() => process.exit(0), 20);
    },
  };
}

/** What ending an enrollment needs. */
interface EndContext {
  base: string;
  dir: string;
  enrollment: string;
  sock: string;
  journal: RunJournal;
  shell: Shell;
  service: HelperService;
  status: StatusPublisher;
  server: () => Server | undefined;
}

/**
 * The enrollment's end, once (revoked, SIGTERM, the shell gone): the record, journal and socket
 * go first, the runs are stopped and given a moment to report, then the channel goes and the
 * helper exits.
 */
function ender(cx: EndContext): (why: string, code: number) => void {
  let ended = false;
  return (why, code) => {
    if (ended) return;
    ended = true;
    log(`ending: ${why}`);
    removeQuietly(recordPath(cx.dir, cx.enrollment));
    cx.status.close();
    removeQuietly(statusPath(cx.dir, cx.enrollment));
    // Only a record leads anyone to the journal: without it the journal is of no use. The runs
    // being stopped now are SIGKILLed on exit if their grace is not over (src/core/os/process-group.ts).
    cx.journal.remove();
    removeQuietly(cx.sock);
    cx.server()?.close();
    if (why === 'revoked') cx.service.shutdown('the enrollment was revoked', 'revoked');
    else cx.service.shutdown('the enrolled shell has exited');
    const finish = (): void => {
      channelFiles(cx.base).forEach(removeQuietly);
      cx.shell.close();
      process.exit(code);
    };
    // Let a stopped run report its outcome (and the audit trail record it) before leaving.
    void Promise.race([cx.service.idle(), new Promise((r) => setTimeout(r, 3000))]).then(() => setTimeout(finish, 20));
  };
}

/** What an unexpected error does: before enrollment, tell the shell; after it, end cleanly. */
let internalFail: (e: Error) => void = (e) => {
  log(`fatal: ${e.stack ?? e.message}`);
  process.exit(1);
};

/** How long the start took: since node started (performance.timeOrigin), and the CPU it used. */
function startCost(): string {
  const cpu = process.cpuUsage();
  return `ready ${Math.round(performance.now())} ms after node started (cpu ${Math.round((cpu.user + cpu.system) / 1000)} ms)`;
}

function existsQuiet(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The helper's life, from its arguments to its end (called once, by helper/main.ts). */
export function runHelper(): void {
  // At the far end of a `tmux-run ssh` session (the snippet says so): served through the forward.
  if (process.env.TMUX_RUN_REMOTE) return runFarHelper();
  ignoreTerminalSignals();
  process.on('uncaughtException', (e) => {
    if (e instanceof EnrollError) return;
    log(`unexpected error: ${e.stack ?? e.message}`);
    failQuietly(e);
  });
  main().catch((e: Error) => {
    if (e instanceof EnrollError) return; // reported to the shell; exiting
    log(`fatal: ${e.stack ?? e.message}`);
    failQuietly(e);
  });
}

function failQuietly(e: Error): void {
  try {
    internalFail(e);
  } catch {
    /* an EnrollError: the shell has been told */
  }
}
