// Unit tests of the pure pieces: framing, tokens, generations, /proc parsing, snapshots, tmux lines, output encoding.
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, FrameError } from '../../src/core/protocol/framing.js';
import { bindingText, signBinding, tokenMatches, type Binding } from '../../src/core/protocol/token.js';
import {
  paneGeneration,
  processGeneration,
  scriptDigest,
  serverGeneration,
  freshId,
} from '../../src/core/enrollment/generation.js';
import { parseProcStat } from '../../src/core/os/proc.js';
import { parseSnapshot } from '../../helper/shell/snapshot.js';
import { parsePaneLine, splitEscaped } from '../../src/core/os/tmux.js';
import { encodeStream, failure, renderText } from '../../src/broker/result.js';
import { validateRunInput, validateRunOutput } from '../../src/broker/contract.js';

const binding: Binding = {
  run_id: 'a'.repeat(32),
  script_digest: 'b'.repeat(64),
  server_generation: '1.2.abcdef',
  pane_id: '%3',
  enrollment_generation: 'c'.repeat(32),
  process_generation: 'd'.repeat(32),
  stdout_limit: 65536,
  stderr_limit: 100,
  issued_at: 1700000000000,
};

describe('framing', () => {
  it('round-trips values split at every byte', () => {
    const frames = Buffer.concat([
      encodeFrame({ a: 1, b: Buffer.from([0, 255]) }),
      encodeFrame('x'),
      encodeFrame(null),
    ]);
    const d = new FrameDecoder();
    const out: unknown[] = [];
    for (const byte of frames) out.push(...d.push(Buffer.from([byte])));
    expect(out).toEqual([{ a: 1, b: Buffer.from([0, 255]) }, 'x', null]);
    expect(d.pending).toBe(0);
  });
  it('refuses a length over the cap before buffering it', () => {
    const d = new FrameDecoder(16);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(17);
    expect(() => d.push(head)).toThrow(FrameError);
  });
  it('refuses a body that is not msgpack', () => {
    const d = new FrameDecoder();
    // An array header that promises two items and holds one.
    expect(() => d.push(Buffer.from([0, 0, 0, 2, 0x92, 0x01]))).toThrow(FrameError);
  });
});

describe('tokens', () => {
  const secret = Buffer.alloc(32, 7);
  it('signs every field: changing any one changes the token', () => {
    const t = signBinding(secret, binding);
    for (const key of Object.keys(binding) as Array<keyof Binding>) {
      const changed = {
        ...binding,
        [key]: typeof binding[key] === 'number' ? binding[key] + 1 : `${binding[key]}0`,
      };
      expect(signBinding(secret, changed), key).not.toBe(t);
    }
    expect(signBinding(Buffer.alloc(32, 8), binding)).not.toBe(t);
  });
  it('compares tokens exactly', () => {
    const t = signBinding(secret, binding);
    expect(tokenMatches(t, t)).toBe(true);
    expect(tokenMatches(t, t.slice(0, -1) + (t.endsWith('0') ? '1' : '0'))).toBe(false);
    expect(tokenMatches(t, 42)).toBe(false);
    expect(tokenMatches(t, '')).toBe(false);
  });
  it('puts each field on its own line', () => {
    expect(bindingText(binding).split('\n')).toHaveLength(10);
  });
});

describe('generations', () => {
  it('a reused pid with another start time is another process generation', () => {
    expect(processGeneration(100, '5', 'boot')).not.toBe(processGeneration(100, '6', 'boot'));
    expect(processGeneration(100, '5', 'boot')).toMatch(/^[a-f0-9]{32}$/);
  });
  it('the pane generation changes with each of its parts', () => {
    const g = { server_generation: 's', pane_id: '%1', process_generation: 'p', enrollment_generation: 'e' };
    const base = paneGeneration(g);
    for (const k of Object.keys(g) as Array<keyof typeof g>)
      expect(paneGeneration({ ...g, [k]: `${g[k]}x` })).not.toBe(base);
  });
  it('names a server by pid, start time and socket, within 128 characters', () => {
    const s = serverGeneration('/tmp/x/'.repeat(100), 4194304, '18446744073709551615', 'boot');
    expect(s.length).toBeLessThanOrEqual(128);
    expect(serverGeneration('/a', 1, '2', 'b')).not.toBe(serverGeneration('/b', 1, '2', 'b'));
  });
  it('digests UTF-8 bytes and makes fresh 32-hex ids', () => {
    expect(scriptDigest('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(freshId()).toMatch(/^[a-f0-9]{32}$/);
    expect(freshId()).not.toBe(freshId());
  });
});

describe('/proc/PID/stat parsing', () => {
  it('counts fields after the last parenthesis, whatever the command name holds', () => {
    const text = '1234 (a) b) R 1 2000 2000 34816 2001 4194304 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0';
    expect(parseProcStat(1234, text)).toEqual({
      pid: 1234,
      ppid: 1,
      pgrp: 2000,
      session: 2000,
      ttyNr: 34816,
      tpgid: 2001,
      startTicks: '987654',
      state: 'R',
      image: ':',
    });
    // Fields 26 (start of code) and 28 (start of stack) name the program image.
    const full = `${text} 25 26 27 28 29`;
    expect(parseProcStat(1234, full)?.image).toBe('26:28');
  });
  it('rejects truncated text', () => {
    expect(parseProcStat(1, '1 (x) R 1 2')).toBeUndefined();
  });
});

describe('shell snapshots', () => {
  it('parses nonce, cwd and NAME=VALUE pairs, values with = and newlines included', () => {
    const snap = parseSnapshot(Buffer.from('n1\0/tmp/a b\0FOO=bar=baz\0ML=a\nb\0EMPTY=\0bogus'), 'n1');
    expect(snap).toEqual({ cwd: '/tmp/a b', env: { FOO: 'bar=baz', ML: 'a\nb', EMPTY: '' }, shell: {} });
  });
  it('refuses a snapshot written for another request', () => {
    expect(parseSnapshot(Buffer.from('old\0/tmp\0A=1'), 'new')).toBeUndefined();
  });
});

describe('tmux list-panes lines', () => {
  it('splits on unescaped spaces and unescapes tmux quoting', () => {
    expect(splitEscaped('a\\ b c\\\\ d')).toEqual(['a b', 'c\\', 'd']);
    expect(parsePaneLine('%3 100 /dev/pts/4 1 my\\ session win\\;1\\ x\\ y')).toEqual({
      pane_id: '%3',
      server_pid: 100,
      pane_tty: '/dev/pts/4',
      window_index: 1,
      session: 'my session',
      window_name: 'win;1 x y',
    });
    expect(parsePaneLine('%3 100 /dev/pts/4 1 session')).toBeUndefined();
    expect(parsePaneLine('garbage')).toBeUndefined();
  });
});

describe('results', () => {
  it('returns UTF-8 output as text and anything else as base64, with raw byte counts', () => {
    expect(encodeStream(Buffer.from('héllo ✓'))).toEqual({
      encoding: 'utf-8',
      data: 'héllo ✓',
      bytes: 10,
      truncated: false,
    });
    expect(encodeStream(Buffer.from([0xff, 0xfe]))).toEqual({
      encoding: 'base64',
      data: '//4=',
      bytes: 2,
      truncated: false,
    });
  });
  it('gives not_sent errors effects none, valid against the contract', () => {
    const r = failure('not_enrolled', 'no', 'not_sent');
    expect(validateRunOutput(r)).toEqual({ ok: true });
    expect(r.ok === false && r.error.effects?.state).toBe('none');
    expect(renderText(r)).toContain('not_enrolled');
  });
  it('validation messages name the input and never echo the script', () => {
    const script = 'echo TOP-SECRET\0';
    const v = validateRunInput({ target: { kind: 'pane', id: '%1', generation: 'g' }, script });
    expect(v.ok).toBe(false);
    expect(!v.ok && v.message).toContain('script');
    expect(!v.ok && v.message).not.toContain('TOP-SECRET');
    const v2 = validateRunInput({ target: { kind: 'pane', id: 'x', generation: 'g' }, script: 'true' });
    expect(!v2.ok && v2.message).toContain('target');
  });
});

describe('the registry directory', () => {
  it('is TMUX_RUN_DIR, else under XDG_RUNTIME_DIR, else under /run/user/UID when it exists, else /tmp', async () => {
    const { resolveRegistryDir } = await import('../../src/core/enrollment/layout.js');
    const exists = () => true;
    const missing = () => false;
    expect(resolveRegistryDir({ TMUX_RUN_DIR: '/x', XDG_RUNTIME_DIR: '/y' }, 5, exists)).toBe('/x');
    expect(resolveRegistryDir({ XDG_RUNTIME_DIR: '/y' }, 5, exists)).toBe('/y/tmux-run');
    // An MCP client that passes no XDG_RUNTIME_DIR still finds the shells' registry.
    expect(resolveRegistryDir({}, 5, exists)).toBe('/run/user/5/tmux-run');
    expect(resolveRegistryDir({}, 5, missing)).toBe('/tmp/tmux-run-5');
  });
});
