// What `tmux-run watch` prints of the watch feed's events (pure but for the clock it is given):
// one line per event or output line, each `TIME PANE RUN TAG TEXT`, every piece of outside text
// (script lines, output, client names, messages) with its control and invisible characters shown as
// `\xHH` (src/core/protocol/escape.ts), cut to the terminal's width; or, for --json, one object per event.
import { isUtf8 } from 'node:buffer';
import type { WatchEvent, WatchStream } from '../core/protocol/messages.js';
import { visibleLine } from '../core/protocol/escape.js';
import { safeJson } from '../broker/escape.js';
import { paint, type Color, type Io } from './common/output.js';

/** An output line still open (no newline yet) is printed once it is this old, or this long. */
export const PARTIAL_MS = 250;
export const PARTIAL_CHARS = 4096;

/** Each stream's tag and colour in a watch line: output, errors, and the input given to the run. */
const STREAM_TAGS: Record<WatchStream, [string, Color | undefined]> = {
  stdout: ['out', undefined],
  stderr: ['err', 'red'],
  stdin: ['in', 'cyan'],
};

const APPROVAL: Record<string, string> = {
  auto: 'mode auto',
  yes: 'mode ask: you approved it',
  always: 'mode ask: you approved it, always for this script',
  remembered: 'mode ask: approved (always, for this script)',
};

const two = (n: number): string => String(n).padStart(2, '0');
const clock = (ms: number): string => {
  const d = new Date(ms);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
};

/** `text` cut to `width` characters (its last three become `...` when cut, never half an `\xHH` escape). */
export function cutTo(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 3) return chars.slice(0, width).join('');
  return (
    chars
      .slice(0, width - 3)
      .join('')
      .replace(/\\(x[0-9a-f]?|u(\{[0-9a-f]*)?)?$/, '') + '...'
  );
}

/** A duration as a person reads it. */
const took = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** How a run ended, in words. */
export function endText(ev: Extract<WatchEvent, { ev: 'end' }>): string {
  const c = ev.completion;
  const how = !c ? '' : c.state === 'exited' ? `exited ${c.exit_status}` : `killed by signal ${c.signal}`;
  const head = ev.ok ? how : `${ev.code ?? 'failed'}${how ? ` (${how})` : ''}`;
  return `${head} after ${took(ev.duration_ms)} (${ev.stdout_bytes} bytes of stdout, ${ev.stderr_bytes} of stderr)`;
}

interface Open {
  decoder: TextDecoder;
  partial: string;
  since: number;
}

export class WatchRenderer {
  private readonly open = new Map<string, Open>();

  constructor(
    private readonly io: Pick<Io, 'color'>,
    /** The terminal's width (Infinity: not a terminal, nothing is cut). */
    public width: number = Infinity,
  ) {}

  private line(at: number, pane: string, runId: string, tag: string, color: Color | undefined, text: string): string {
    const head = `${clock(at)} ${pane} ${runId.slice(0, 8)} `;
    const tagged = `${tag.padEnd(7)} `;
    const shown = cutTo(head + tagged + visibleLine(text), this.width);
    // Colour goes around the pieces of the cut line (head and tag are ASCII); the text was escaped before it was cut.
    const n = head.length;
    return (
      paint(this.io as Io, 'dim', shown.slice(0, n)) +
      paint(this.io as Io, color, shown.slice(n, n + tagged.length)) +
      shown.slice(n + tagged.length)
    );
  }

  /** A pane's feed began (`watching`) or ended (`gone`). */
  pane(at: number, pane: string, what: 'watching' | 'gone'): string {
    const text = what === 'watching' ? 'watching this pane' : 'no longer watched (its enrollment ended)';
    return paint(this.io as Io, 'dim', cutTo(`${clock(at)} ${pane} ${text}`, this.width));
  }

  /** The lines one event prints now (an output chunk's complete lines; the rest waits for more). */
  event(pane: string, ev: WatchEvent): string[] {
    const out: string[] = [];
    const say = (tag: string, color: Color | undefined, text: string): void => {
      out.push(this.line(ev.at, pane, ev.run_id, tag, color, text));
    };
    switch (ev.ev) {
      case 'start': {
        const who = ev.client ? `by ${ev.client}` : 'by an unnamed client';
        say(
          'start',
          'cyan',
          `${who}; ${APPROVAL[ev.approval] ?? ev.approval}; sandbox ${ev.sandbox}; sha256 ${ev.script_digest.slice(0, 12)}; ${ev.script_bytes} bytes, ${ev.script_lines} line${ev.script_lines === 1 ? '' : 's'}${ev.background ? '; in the background' : ''}${ev.input && ev.input !== 'closed' ? `; input ${ev.input}` : ''}`,
        );
        // Preview lines come escaped from the helper; escaping them again changes nothing but what a helper got wrong.
        for (const l of ev.preview) say('  |', 'dim', l);
        const more = ev.script_lines - ev.preview.length;
        if (more > 0) say('  |', 'dim', `(${more} more line${more === 1 ? '' : 's'} not shown)`);
        break;
      }
      case 'output':
        out.push(...this.output(pane, ev.run_id, ev.stream, ev.data, ev.at));
        break;
      case 'missed':
        out.push(...this.flushRun(pane, ev.run_id, ev.at));
        say(
          'missed',
          'yellow',
          `${ev.bytes} bytes of ${ev.stream} (this watcher did not keep up; the run did not wait)`,
        );
        break;
      case 'end':
        out.push(...this.flushRun(pane, ev.run_id, ev.at));
        say('end', ev.ok ? 'green' : 'red', endText(ev));
        break;
      case 'refused':
        say(
          'refused',
          'yellow',
          `${ev.code}: ${ev.message}${ev.client ? ` (asked by ${ev.client})` : ''}${ev.script_digest ? `; sha256 ${ev.script_digest.slice(0, 12)}` : ''}`,
        );
        break;
    }
    return out;
  }

  private output(pane: string, runId: string, stream: WatchStream, data: Buffer, at: number): string[] {
    const key = `${pane} ${runId} ${stream}`;
    let o = this.open.get(key);
    if (!o) {
      o = { decoder: new TextDecoder('utf-8'), partial: '', since: at };
      this.open.set(key, o);
    }
    if (o.partial === '') o.since = at;
    const parts = (o.partial + o.decoder.decode(data, { stream: true })).split('\n');
    o.partial = parts.pop() ?? '';
    if (o.partial.length >= PARTIAL_CHARS) {
      parts.push(o.partial);
      o.partial = '';
    }
    return parts.map((l) => this.outputLine(pane, runId, stream, l, at));
  }

  private outputLine(pane: string, runId: string, stream: WatchStream, text: string, at: number): string {
    const [tag, color] = STREAM_TAGS[stream];
    return this.line(at, pane, runId, tag, color, text.replace(/\r$/, ''));
  }

  /** Prints what a run's streams still hold open (its end came, or a gap in its output). */
  private flushRun(pane: string, runId: string, at: number): string[] {
    const out: string[] = [];
    for (const stream of ['stdout', 'stderr', 'stdin'] as const) {
      const key = `${pane} ${runId} ${stream}`;
      const o = this.open.get(key);
      if (!o) continue;
      const rest = o.partial + o.decoder.decode();
      this.open.delete(key);
      if (rest !== '') out.push(this.outputLine(pane, runId, stream, rest, at));
    }
    return out;
  }

  /** Open output lines older than PARTIAL_MS (a prompt, a progress bar), printed as they stand. */
  stale(now: number): string[] {
    const out: string[] = [];
    for (const [key, o] of this.open) {
      if (o.partial === '' || now - o.since < PARTIAL_MS) continue;
      const [pane = '', runId = '', stream = 'stdout'] = key.split(' ');
      out.push(this.outputLine(pane, runId, stream as WatchStream, o.partial, now));
      o.partial = '';
    }
    return out;
  }
}

/** One event as --json prints it: a line of JSON (output as UTF-8 text when it is, else base64). */
export function jsonEvent(pane: string, ev: WatchEvent): string {
  const { type: _type, ev: kind, at, ...rest } = ev as WatchEvent & { data?: Buffer };
  const body: Record<string, unknown> = { event: kind, time: new Date(at).toISOString(), pane_id: pane, ...rest };
  if (ev.ev === 'output') {
    const utf8 = isUtf8(ev.data);
    body.encoding = utf8 ? 'utf-8' : 'base64';
    body.data = ev.data.toString(utf8 ? 'utf8' : 'base64');
  }
  return safeJson(body);
}

/** A pane's feed beginning or ending, as --json prints it. */
export const jsonPane = (at: number, pane: string, what: 'watching' | 'gone'): string =>
  safeJson({ event: what, time: new Date(at).toISOString(), pane_id: pane });
