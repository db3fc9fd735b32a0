// What the helper and the walls' waiter say to each other (helper/walls/waiter.ts, pure): a run's
// request byte for byte, and what a run's reaper reports.
import { describe, expect, it } from 'vitest';
import { encodeRequest, parseReaper, prefork, prctlNumber } from '../../helper/walls/waiter.js';

describe("the waiter's requests", () => {
  it('asks for a spare by a token of 32 hex digits, one line', () => {
    expect(prefork('0123456789abcdef'.repeat(2))).toBe(`P${'0123456789abcdef'.repeat(2)}\n`);
  });
  it('is 8 hex digits of length, then the NUL-terminated fields, the env bytes untouched', () => {
    const frame = encodeRequest({
      umask: 0o027,
      cwd: '/w/lat\xe9n',
      script: 'echo é',
      env: { BAD: '\xff\xfe ok' },
    });
    const body = frame.subarray(8);
    expect(frame.subarray(0, 8).toString('latin1')).toBe(body.length.toString(16).padStart(8, '0'));
    expect(body).toEqual(
      Buffer.concat([
        Buffer.from(`\x0027\x00/w/lat\xe9n\x00`, 'latin1'),
        Buffer.from('echo é\0', 'utf8'),
        Buffer.from('BAD=\xff\xfe ok\0', 'latin1'),
      ]),
    );
  });
  it('leaves the umask empty when the shell’s is not known', () => {
    const f = encodeRequest({ umask: undefined, cwd: '/', script: 'true', env: {} });
    expect(f.subarray(8).toString('latin1')).toBe('\0\0/\0true\0');
  });
  it('says what stdin is first: empty for /dev/null, p for a pipe, tCOLS,ROWS for a terminal', () => {
    const field = (input?: Parameters<typeof encodeRequest>[0]['input']) =>
      encodeRequest({ ...(input ? { input } : {}), umask: 0o22, cwd: '/', script: 'true', env: {} })
        .subarray(8)
        .toString('latin1')
        .split('\0')[0];
    expect(field()).toBe('');
    expect(field({ kind: 'pipe' })).toBe('p');
    expect(field({ kind: 'terminal', cols: 100, rows: 30 })).toBe('t100,30');
  });
});

describe("a reaper's report", () => {
  it('gives the pid, then the raw status, whatever the chunks', () => {
    expect(parseReaper('S 4\n')).toEqual({ pid: 4 });
    expect(parseReaper('S 4\nW 3840\n')).toEqual({ pid: 4, status: 3840 });
    expect(parseReaper('S 4\nW 38')).toEqual({ pid: 4 });
  });
  it("says when a run's input or terminal could not be set up (nothing ran)", () => {
    expect(parseReaper('S 5\nI 111\nW 32000\n').failed).toMatch(
      /input could not be connected in the sandbox \(errno 111\)/,
    );
    expect(parseReaper('S 5\nT 95\nW 32000\n').failed).toMatch(
      /terminal could not be made in the sandbox \(errno 95\)/,
    );
  });
  it('says what failed before the script started, and ignores what it does not know', () => {
    expect(parseReaper('S 5\nC 2\nW 32000\n').failed).toMatch(/current directory could not be entered \(errno 2\)/);
    expect(parseReaper('E 7\n').failed).toMatch(/could not be executed \(errno 7\)/);
    expect(parseReaper('X 1\nS x\n')).toEqual({});
  });
  it('knows prctl on the architectures Node runs on here', () => {
    expect(prctlNumber('x64')).toBe(157);
    expect(prctlNumber('arm64')).toBe(167);
    expect(prctlNumber('mips')).toBeUndefined();
  });
});
