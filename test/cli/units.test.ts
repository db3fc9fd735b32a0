// Pure pieces of the CLI: escaping, argument parsing, --since, log rows, versions, pane choice.
import { describe, expect, it } from 'vitest';
import { escapeControls, safeJson } from '../../src/broker/escape.js';
import { parseArgs, wantsHelp } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/common/errors.js';
import { formatDuration, logRow, matches, parseSince } from '../../src/cli/log.js';
import { versionOf } from '../../src/cli/doctor.js';
import { choose } from '../../src/cli/revoke.js';
import { formatRows, type Io } from '../../src/cli/common/output.js';
import { shellQuote } from '../../src/core/os/package-root.js';
import type { PaneListing } from '../../src/broker/registry.js';

describe('escapeControls', () => {
  it('makes C0, DEL and C1 controls visible and keeps everything else', () => {
    expect(escapeControls('plain text, ünïcode ✓ and \\ backslash')).toBe('plain text, ünïcode ✓ and \\ backslash');
    expect(escapeControls('\x1b]2;pwned\x07')).toBe('\\x1b]2;pwned\\x07');
    expect(escapeControls('a\nb\tc\rd\0e')).toBe('a\\x0ab\\x09c\\x0dd\\x00e');
    expect(escapeControls('del\x7f c1\x9b31m \x80\x9f')).toBe('del\\x7f c1\\x9b31m \\x80\\x9f');
    expect(escapeControls('\u00a0after C1')).toBe('\u00a0after C1');
  });

  it('leaves no control character in any output', () => {
    let all = '';
    for (let c = 0; c < 0x200; c++) all += String.fromCharCode(c);
    expect(escapeControls(all)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('safeJson escapes DEL and C1 inside strings and still parses to the same value', () => {
    const v = { s: 'a\x1b[31m\x7f\x9b\u2028', n: [1, null] };
    const text = safeJson(v);
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(JSON.parse(text)).toEqual(v);
  });
});

describe('parseArgs', () => {
  const spec = { options: { json: false, pane: true }, positionals: ['PANE'], required: 0 };

  it('takes flags, values in both spellings, positionals and --', () => {
    expect(parseArgs('x', spec, ['--json', '--pane', '%3'])).toEqual({
      options: new Map<string, string | true>([
        ['json', true],
        ['pane', '%3'],
      ]),
      positionals: [],
    });
    expect(parseArgs('x', spec, ['--pane=%4', 'a']).options.get('pane')).toBe('%4');
    expect(parseArgs('x', spec, ['--', '--json']).positionals).toEqual(['--json']);
  });

  it('rejects unknown options, extra arguments, missing values and repeats', () => {
    const bad = (argv: string[], re: RegExp): void => {
      expect(() => parseArgs('x', spec, argv)).toThrow(UsageError);
      expect(() => parseArgs('x', spec, argv)).toThrow(re);
    };
    bad(['--nope'], /unknown option --nope/);
    bad(['-x'], /unknown option -x/);
    bad(['--constructor'], /unknown option/);
    bad(['a', 'b'], /unexpected argument 'b'/);
    bad(['--pane'], /needs a value/);
    bad(['--pane', '--json'], /needs a value/);
    bad(['--json=1'], /takes no value/);
    bad(['--json', '--json'], /given twice/);
    bad(['--\x1b[2J'], /unknown option --\\x1b\[2J/);
    expect(() => parseArgs('x', { options: {}, positionals: ['PANE'] }, [])).toThrow(/missing argument PANE/);
  });

  it('finds --help anywhere before --', () => {
    expect(wantsHelp(['--bogus', '-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
  });
});

describe('log pieces', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');

  it('parses --since durations and ISO times, and refuses the rest', () => {
    expect(parseSince('10m', now)).toBe(now - 600_000);
    expect(parseSince('2h', now)).toBe(now - 7_200_000);
    expect(parseSince('1.5d', now)).toBe(now - 129_600_000);
    expect(parseSince('2024-04-30T00:00:00Z', now)).toBe(Date.parse('2024-04-30T00:00:00Z'));
    expect(parseSince('2024-04-30', now)).toBe(Date.parse('2024-04-30'));
    for (const bad of ['10', 'm', '5q', 'yesterday', '2024-13-45', '-5m'])
      expect(() => parseSince(bad, now)).toThrow(UsageError);
  });

  it('filters by pane, run prefix and time', () => {
    const e = { time: '2024-05-01T11:55:00.000Z', pane_id: '%3', run_id: 'abcdef0123' };
    expect(matches(e, {})).toBe(true);
    expect(matches(e, { pane: '%3', run: 'abc', since: now - 600_000 })).toBe(true);
    expect(matches(e, { pane: '%4' })).toBe(false);
    expect(matches(e, { run: 'abd' })).toBe(false);
    expect(matches(e, { since: now - 60_000 })).toBe(false);
    expect(matches({ pane_id: '%3' }, { since: 0 })).toBe(false);
  });

  it('renders a row for an end entry and dashes for what is missing', () => {
    const row = logRow({
      time: '2024-05-01T11:55:00.123Z',
      event: 'end',
      pane_id: '%3',
      run_id: '0123456789abcdef',
      outcome: 'exited',
      script_digest: 'ffeeddccbbaa99887766',
      exit_status: 0,
      signal: null,
      stdout_bytes: 12,
      stderr_bytes: 0,
      duration_ms: 1234,
    }).map((c) => (typeof c === 'string' ? c : c.text));
    expect(row).toEqual([
      '2024-05-01T11:55:00Z',
      '%3',
      '01234567',
      'end',
      'exited',
      '0',
      '12/0',
      '1.2s',
      'ffeeddccbbaa',
    ]);
    const sig = logRow({ event: 'end', exit_status: null, signal: 9 }).map((c) => (typeof c === 'string' ? c : c.text));
    expect(sig).toEqual(['-', '-', '-', 'end', '-', 'SIGKILL', '-', '-', '-']);
    expect(formatDuration(350)).toBe('350ms');
    expect(formatDuration(125_000)).toBe('2m05s');
  });
});

describe('output', () => {
  const io: Io = { out: () => {}, err: () => {}, color: false, env: {} };
  it('aligns columns on the escaped text and escapes every cell', () => {
    const { lines } = formatRows(io, [
      ['A', 'B', 'C'],
      ['x\x1by', 'long value', 'z'],
    ]);
    expect(lines).toEqual(['A       B           C', 'x\\x1by  long value  z']);
  });
  it('colours only when asked', () => {
    const coloured = formatRows({ ...io, color: true }, [[{ text: 'ok', color: 'green' }]]).lines[0];
    expect(coloured).toBe('\x1b[32mok\x1b[0m');
  });
  it('quotes paths for the shell only when needed', () => {
    expect(shellQuote('/a/b-c.zsh')).toBe('/a/b-c.zsh');
    expect(shellQuote("/a b/it's")).toBe(`'/a b/it'\\''s'`);
  });
});

describe('doctor versions', () => {
  it('reads major and minor from tool output', () => {
    expect(versionOf('tmux 3.3a')).toEqual([3, 3]);
    expect(versionOf('zsh 5.9 (x86_64-debian-linux-gnu)')).toEqual([5, 9]);
    expect(versionOf('tmux master')).toBeUndefined();
  });
});

describe('revoke: choosing the enrollment', () => {
  const pane = (id: string, generation: string, socket: string): PaneListing => ({
    pane_id: id,
    generation,
    session: 's',
    window: 0,
    window_name: 'w',
    cwd: '/',
    shell_pid: 1,
    helper_pid: 2,
    state: 'idle',
    mode: 'auto',
    sandbox: 'off',
    shell: 'zsh',
    editor_check: 'exact',
    editor_check_reason: null,
    queued: 0,
    enrolled_at: '2024-05-01T00:00:00Z',
    host: null,
    sleeps_after: '10m',
    tmux_socket: socket,
    server_generation: 'x',
    process_generation: 'p'.repeat(32),
    enrollment_generation: generation.split('').reverse().join(''),
  });
  const a = pane('%1', 'a'.repeat(32), '/tmp/A');
  const b = pane('%1', 'b'.repeat(32), '/tmp/B');
  const c = pane('%2', 'c'.repeat(32), '/tmp/A');

  it('finds by pane id or generation', () => {
    expect(choose([a, c], '%1', undefined, undefined)).toBe(a);
    expect(choose([a, c], 'cccc', undefined, undefined)).toBe(c);
    expect(choose([a, c], '%9', undefined, undefined)).toBeUndefined();
    expect(() => choose([a, c], 'what', undefined, undefined)).toThrow(UsageError);
  });

  it('prefers the server in $TMUX when a pane id is enrolled twice, else wants --generation', () => {
    expect(choose([a, b, c], '%1', undefined, '/tmp/B,123,0')).toBe(b);
    expect(() => choose([a, b, c], '%1', undefined, undefined)).toThrow(/--generation/);
    expect(() => choose([a, b, c], '%1', undefined, '/tmp/C,1,0')).toThrow(/--generation/);
    expect(choose([a, b, c], '%1', 'aaaaaaaa', '/tmp/B,123,0')).toBe(a);
    expect(choose([a, b, c], '%1', 'dddd', undefined)).toBeUndefined();
  });
});
