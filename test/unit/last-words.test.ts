import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { afterLastWords, LAST_WORDS_MS } from '../../helper/walls/last-words.js';

describe('afterLastWords', () => {
  it('waits, after an exit, for what the process wrote last on its pipe', async () => {
    for (let i = 0; i < 20; i++) {
      const child = spawn('/bin/sh', ['-c', 'echo "bwrap: its last words" >&2'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let said = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (said += c));
      const heard = await new Promise<string>((r) =>
        child.once('exit', () => afterLastWords(child.stderr, () => r(said))),
      );
      expect(heard).toBe('bwrap: its last words\n');
    }
  });

  it('goes on after LAST_WORDS_MS when the pipe stays open, and at once without one', async () => {
    const open = new PassThrough();
    const start = Date.now();
    await new Promise<void>((r) => afterLastWords(open, r));
    expect(Date.now() - start).toBeGreaterThanOrEqual(LAST_WORDS_MS - 5);
    let called = false;
    afterLastWords(null, () => (called = true));
    expect(called).toBe(true);
  });
});
