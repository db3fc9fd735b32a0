// The screen check's look at a pane when it enrolls (helper/shell/screen/prompt-probe.ts): it blames the
// prompt only when the check says the prompt is the cause twice in a row, says nothing when the
// moment is the cause or the prompt is served, and stops once it knows.
import { describe, expect, it } from 'vitest';
import { promptAdvice, startProbe, unservableText, type Probed } from '../../helper/shell/screen/prompt-probe.js';
import type { ScreenVerdict } from '../../helper/shell/screen/screen.js';
import { waitUntil } from '../../lab/waiting.js';

type Look = Awaited<ReturnType<Probed['probeAsk']>>;
// A look the shell answered and the check passed (the probe reads only `ok`).
const served = { result: { ok: true } } as unknown as Look;
const refused = (
  cause: 'prompt' | 'line',
  reason = 'r',
): { result: { ok: false; reason: string }; verdict: ScreenVerdict } => ({
  result: { ok: false, reason: `screen:${reason}` },
  verdict: { ok: false, reason, cause },
});

/** A shell whose looks answer `answers` in turn (then nothing more); records what was said. */
function shell(answers: Look[]): Probed & { said: string[]; looks: number } {
  const s = {
    said: [] as string[],
    looks: 0,
    probeAsk: async () => {
      s.looks++;
      return answers.shift() as never;
    },
    promptUnservable: (text: string) => void s.said.push(text),
    isClosed: () => false,
  };
  return s;
}

describe('the probe at enrolling', () => {
  it('says the prompt cannot be served after two looks that blame it, once', async () => {
    const s = shell([refused('line'), refused('prompt', 'a clock'), refused('prompt', 'a clock')]);
    startProbe(s, [0, 0, 0, 0, 0]);
    await waitUntil(() => s.said.length === 1, 2000, 'the probe to say it');
    expect(s.said[0]).toMatch(/cannot serve this prompt \(a clock\)/);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.looks).toBe(3);
  });

  it('says nothing when the prompt is served, or when only the moment refused', async () => {
    const a = shell([refused('prompt'), served, refused('prompt'), refused('prompt')]);
    startProbe(a, [0, 0, 0, 0, 0]);
    const b = shell([refused('line'), undefined, refused('line')]);
    startProbe(b, [0, 0, 0]);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.said).toEqual([]);
    expect(a.looks).toBe(2);
    expect(b.said).toEqual([]);
    expect(b.looks).toBe(3);
  });

  it('gives what to change for each reason the check gives', () => {
    expect(promptAdvice('it moves the cursor to a fixed place, or clears or scrolls the screen')).toMatch(
      /without moving the cursor/,
    );
    expect(promptAdvice('the right prompt cannot be placed for sure: it takes more than one row')).toMatch(
      /right prompt to one row/,
    );
    expect(unservableText('x')).toMatch(/^tmux-run: runs here will be refused editor_not_empty: .*then enroll again$/);
  });
});
