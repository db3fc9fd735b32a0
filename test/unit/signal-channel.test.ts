// The signal-woken channel's files (helper/shell/signal/signal.ts), parsed: an answer counts only when
// complete, a K carries the rendered prompt, the mode file says what listings show.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAnswer, parseModes, writeMessages } from '../../helper/shell/signal/signal-files.js';
import { CHANNEL } from '../../src/core/enrollment/layout.js';
import { exchangePaths } from '../../src/core/os/native-spawn.js';

const N = 'a'.repeat(32);
const b = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('parseAnswer', () => {
  it('takes a B or an A once its line is whole', () => {
    expect(parseAnswer(b(`B ${N} context:continuation\n`))).toEqual({ line: `B ${N} context:continuation` });
    expect(parseAnswer(b(`B ${N} busy`))).toBeUndefined();
    expect(parseAnswer(b(`A ${N} 120\n`))).toEqual({ line: `A ${N} 120` });
  });

  it('takes a K with its prompt and right prompt once both are ended, and the mode strings after', () => {
    expect(parseAnswer(b(`K ${N}\n$ \0`))).toBeUndefined();
    expect(parseAnswer(b(`K ${N}\n\x01\x1b[1m\x02$ \0RIGHT\0`))).toEqual({
      line: `K ${N}`,
      prompt: { prompt: '\x01\x1b[1m\x02$ ', right: 'RIGHT' },
    });
    expect(parseAnswer(b(`K ${N}\na\nb $ \0\0(ins)\0(cmd)\0`))).toEqual({
      line: `K ${N}`,
      prompt: { prompt: 'a\nb $ ', right: '', prefixes: ['(ins)', '(cmd)'] },
    });
  });

  it('refuses what is not an answer', () => {
    expect(parseAnswer(b('K short\n\0\0'))).toBeUndefined();
    expect(parseAnswer(b(`Q ${N}\n`))).toBeUndefined();
    expect(parseAnswer(b(`B ${N} two words\n`))).toBeUndefined();
  });
});

describe('parseModes', () => {
  it('reads the mode line, and says unknown for anything else', () => {
    expect(parseModes(b('M ask workspace\n'))).toEqual({ mode: 'ask', sandbox: 'workspace' });
    expect(parseModes(b('M auto off\n'))).toEqual({ mode: 'auto', sandbox: 'off' });
    expect(parseModes(b('M auto of'))).toEqual({ mode: 'unknown', sandbox: 'unknown' });
    expect(parseModes(undefined)).toEqual({ mode: 'unknown', sandbox: 'unknown' });
  });
  it('reads quiet (notices off) only as the last field', () => {
    expect(parseModes(b('M auto off quiet\n'))).toStrictEqual({ mode: 'auto', sandbox: 'off', quiet: true });
    expect(parseModes(b('M ask read-only\n'))).toStrictEqual({ mode: 'ask', sandbox: 'read-only' });
    expect(parseModes(b('M auto off quietly\n'))).toStrictEqual({ mode: 'unknown', sandbox: 'unknown' });
  });
});

describe('writeMessages', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signal-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the lines whole, 0600, one per line, with no line breaks inside a line', () => {
    const base = join(dir, 'ch.1.2');
    writeMessages(base, [`R ${N} ${N}`, `Q ${N}`, 'N 1 two\nlines']);
    expect(readFileSync(base + CHANNEL.message, 'utf8')).toBe(`R ${N} ${N}\nQ ${N}\nN 1 two lines\n`);
    expect(statSync(base + CHANNEL.message).mode & 0o777).toBe(0o600);
    writeMessages(base, ['X']);
    expect(readFileSync(base + CHANNEL.message, 'utf8')).toBe('X\n');
  });

  it('swaps the new file in (the message file is there at every moment) and leaves nothing beside it', async () => {
    const base = join(dir, 'ch.3.4');
    writeMessages(base, [`R ${N} ${N}`]);
    // Written in one turn, the old one and its successor each swapped out and removed after.
    writeMessages(base, [`R ${N} ${N}`, `Q ${N}`]);
    writeMessages(base, [`R ${N} ${N}`, 'N 1 notice']);
    expect(readFileSync(base + CHANNEL.message, 'utf8')).toBe(`R ${N} ${N}\nN 1 notice\n`);
    await new Promise((r) => setImmediate(r));
    expect(readdirSync(dir).filter((f) => f.startsWith('ch.3.4'))).toEqual(['ch.3.4' + CHANNEL.message]);
  });
});

describe('exchangePaths', () => {
  it('swaps two files in one step where the addon is built (as here), and says false where it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swap-'));
    try {
      writeFileSync(join(dir, 'a'), 'A');
      writeFileSync(join(dir, 'b'), 'B');
      expect(exchangePaths(join(dir, 'a'), join(dir, 'b'))).toBe(true);
      expect([readFileSync(join(dir, 'a'), 'utf8'), readFileSync(join(dir, 'b'), 'utf8')]).toEqual(['B', 'A']);
      expect(exchangePaths(join(dir, 'a'), join(dir, 'missing'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
