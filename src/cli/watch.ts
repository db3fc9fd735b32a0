// `tmux-run watch`: the person's read-only live view of what agents run in their enrolled panes.
// It links to every enrolled pane's helper (and to panes enrolled later), sends each a signed watch
// request (the enrollment's secret: the person's alone, as the registry's permissions are), and
// prints the feed (src/cli/watch-render.ts). It never asks a helper to do anything else.
import { authorizeHeld } from '../broker/authorize.js';
import { connectHelper, exchange, type Exchange } from '../broker/helper-client.js';
import { recordSocket, scanRecords } from '../broker/registry.js';
import { escapeControls } from '../broker/escape.js';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import type { Reply } from '../core/protocol/messages.js';
import { CliError, UsageError } from './common/errors.js';
import { existingRegistryDir } from './registry-dir.js';
import { jsonEvent, jsonPane, WatchRenderer } from './watch-render.js';
import type { Io } from './common/output.js';
import type { Command } from './command.js';

/** How often the registry is looked at again for panes enrolled since. */
const RESCAN_MS = 1000;

interface Options {
  dir: string | undefined;
  pane?: string;
  run?: string;
  json: boolean;
}

/** Parses --pane and --run (a run id or its first 8 or more hex digits). */
function options(args: Map<string, string | true>, io: Io): Options {
  const pane = args.get('pane');
  const run = args.get('run');
  if (typeof pane === 'string' && !/^%[0-9]{1,30}$/.test(pane))
    throw new UsageError(`watch: '${escapeControls(pane)}' is not a pane id (as tmux names it: %3)`);
  if (typeof run === 'string' && !/^[a-fA-F0-9]{8,32}$/.test(run))
    throw new UsageError(`watch: '${escapeControls(run)}' is not a run id (32 hex digits, or at least the first 8)`);
  return {
    dir: existingRegistryDir(io.env),
    ...(typeof pane === 'string' ? { pane } : {}),
    ...(typeof run === 'string' ? { run: run.toLowerCase() } : {}),
    json: args.has('json'),
  };
}

/** One watch: a link per enrolled pane's helper, the feed printed, until ^C or the watched run's end. */
class Session {
  private readonly render: WatchRenderer;
  private readonly links = new Map<string, Exchange>();
  /** Enrollments tried, and those whose helper answered (whether it knows the watched run). */
  private readonly tried = new Set<string>();
  private readonly answers = new Map<string, boolean>();
  private said = false;
  private timers: NodeJS.Timeout[] = [];
  private resolve: (code: number) => void = () => undefined;
  private readonly onSignal = (): void => this.finish(0);
  private readonly onResize = (): void => void (this.render.width = Session.width());

  constructor(
    private readonly o: Options,
    private readonly io: Io,
  ) {
    this.render = new WatchRenderer(io, Session.width());
  }

  private static width(): number {
    return process.stdout.isTTY ? process.stdout.columns || 80 : Infinity;
  }

  run(): Promise<number> {
    return new Promise<number>((resolve) => {
      this.resolve = resolve;
      process.stdout.on('resize', this.onResize);
      process.once('SIGINT', this.onSignal);
      process.once('SIGTERM', this.onSignal);
      this.timers.push(setInterval(() => this.print(this.render.stale(Date.now())), 100));
      this.scan();
      // A watch of one run looks only at the panes enrolled now; the live view picks up new ones.
      if (this.o.run === undefined) this.timers.push(setInterval(() => this.scan(), RESCAN_MS));
    });
  }

  private print(lines: string[]): void {
    if (lines.length > 0) this.io.out(lines.join('\n') + '\n');
  }

  private paneLine(pane: string, what: 'watching' | 'gone'): void {
    const at = Date.now();
    this.print([this.o.json ? jsonPane(at, pane, what) : this.render.pane(at, pane, what)]);
  }

  private finish(code: number): void {
    for (const t of this.timers) clearInterval(t);
    process.stdout.off('resize', this.onResize);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    for (const x of this.links.values()) x.close();
    this.links.clear();
    this.resolve(code);
  }

  private scan(): void {
    const o = this.o;
    let dir: string | undefined;
    let recs: EnrollmentRecord[];
    try {
      dir = o.dir ?? existingRegistryDir(this.io.env);
      recs = dir === undefined ? [] : scanRecords(dir).filter((r) => o.pane === undefined || r.pane_id === o.pane);
    } catch (e) {
      // The registry became unsafe (or unreadable) while watching: say so once, and stop.
      this.io.err(`tmux-run: ${escapeControls((e as Error).message)}\n`);
      this.finish(1);
      return;
    }
    for (const rec of recs) if (!this.tried.has(rec.enrollment_generation)) this.link(rec, dir!);
    if (o.run !== undefined && this.tried.size === 0) {
      this.io.err(`tmux-run: no pane${o.pane ? ` ${o.pane}` : ''} is enrolled, so no helper holds run ${o.run}\n`);
      this.finish(1);
    } else if (recs.length === 0 && !this.said && !o.json) {
      this.said = true;
      this.io.err(`tmux-run: no pane${o.pane ? ` ${o.pane}` : ''} is enrolled yet; watching for one (^C to stop)\n`);
    }
  }

  /** A helper answered whether it knows the watched run; when none does, the watch ends. */
  private answered(gen: string, found: boolean): void {
    this.answers.set(gen, found);
    const o = this.o;
    if (o.run === undefined || this.answers.size < this.tried.size) return;
    if ([...this.answers.values()].some(Boolean)) return;
    this.io.err(
      `tmux-run: no enrolled pane's helper knows run ${o.run} (a run started with tmux_run_start is held for 10 minutes after it ends, a tmux_run run only while it waits or runs; 'tmux-run log --run ${o.run}' keeps every outcome)\n`,
    );
    this.finish(1);
  }

  private link(rec: EnrollmentRecord, dir: string): void {
    const gen = rec.enrollment_generation;
    this.tried.add(gen);
    connectHelper(recordSocket(dir, rec)).then(
      (t) => {
        const x = exchange(t);
        this.links.set(gen, x);
        x.onreply = (r) => this.onReply(rec, r);
        x.onclose = () => {
          this.links.delete(gen);
          if (this.o.run !== undefined && this.answers.get(gen) !== true) return;
          this.paneLine(rec.pane_id, 'gone');
          if (this.o.run !== undefined) this.finish(1);
        };
        const run = this.o.run;
        x.send({ type: 'watch', ...(run ? { run } : {}), auth: authorizeHeld(rec, 'watch', run ?? '') });
      },
      // A record whose helper is gone (its shell cleans up): a pane that does not know the run.
      () => this.answered(gen, false),
    );
  }

  private onReply(rec: EnrollmentRecord, r: Reply): void {
    const pane = rec.pane_id;
    if (r.type === 'watching') {
      if (this.o.run === undefined || r.found === true) this.paneLine(pane, 'watching');
      this.answered(rec.enrollment_generation, r.found === true);
      return;
    }
    if (r.type === 'error') {
      this.io.err(`tmux-run: pane ${pane}'s helper refused to be watched: ${escapeControls(r.message)} (${r.code})\n`);
      return;
    }
    if (r.type !== 'watch_event') return;
    this.print(this.o.json ? [jsonEvent(pane, r)] : this.render.event(pane, r));
    // One run watched: its end (or its refusal) is the end of the watch.
    if (this.o.run !== undefined && (r.ev === 'end' || r.ev === 'refused')) this.finish(r.ev === 'end' ? 0 : 1);
  }
}

export const watch: Command = {
  name: 'watch',
  summary: "the person's live view of what agents run in the enrolled panes (read-only)",
  help: `Usage: tmux-run watch [--pane %N] [--run RUN] [--json]

Show, as they happen, the runs agents make in your enrolled panes: each run's start (time, pane,
run id, who asked, mode, sandbox, the start of its sha256, its first lines), its stdout ("out")
and stderr ("err") as they come, and its end (exit status or signal, duration, bytes); refusals
too. Panes enrolled later are picked up. Control characters in scripts and output are shown as
\\xHH, lines are cut to the terminal's width, and colour is used on a terminal unless NO_COLOR is
set. It only reads: nothing is sent to the panes, and a run never waits for a watcher (one that
cannot keep up loses output, and is told how many bytes it missed). Good in a spare pane or a
popup: tmux display-popup -E tmux-run watch. Who asked is the name the MCP client gave itself: a
label, not an identity. ^C stops it.

Options:
  --pane %N   watch one pane only
  --run RUN   one run (its id, or at least its first 8 hex digits): what its helper still keeps of
              it, then the rest as it comes; ends with the run (exit 0; 1 when it was refused)
  --json      one JSON object per line: watching, start, output (encoding utf-8 or base64),
              missed, end, refused, gone
  -h, --help  show this help
`,
  spec: { options: { pane: true, run: true, json: false } },
  async run(args, io) {
    const o = options(args.options, io);
    if (o.dir === undefined && o.run !== undefined)
      throw new CliError(`no pane is enrolled, so no helper holds run ${o.run}`);
    return new Session(o, io).run();
  },
};
