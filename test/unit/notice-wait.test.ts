// When a signal-woken shell is woken for a notice (helper/shell/signal/notice-wait.ts).
import { describe, expect, it } from 'vitest';
import { NOTICE_WAIT_MS, NoticeWait } from '../../helper/shell/signal/notice-wait.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function shell() {
  let kept = '';
  const drawn: string[] = [];
  const wait = new NoticeWait(() => drawn.push(kept));
  const add = (text: string) => wait.add(text, () => (kept = text));
  return { wait, add, drawn };
}

describe('NoticeWait', () => {
  it("draws a short run's end in its start's place: one wake", async () => {
    const s = shell();
    s.add('tmux-run: run aaaa1111 started');
    s.add('tmux-run: run aaaa1111 exited 0 after 3 ms');
    expect(s.drawn).toEqual([]);
    await sleep(NOTICE_WAIT_MS + 30);
    expect(s.drawn).toEqual(['tmux-run: run aaaa1111 exited 0 after 3 ms']);
  });

  it("never lets another run's notice, or one about no run, take a waiting one's place", () => {
    const s = shell();
    s.add('tmux-run: run aaaa1111 exited 0 after 3 ms');
    s.add('tmux-run: run bbbb2222 started');
    expect(s.drawn).toEqual(['tmux-run: run aaaa1111 exited 0 after 3 ms']);
    s.add('tmux-run: something about the pane');
    expect(s.drawn).toEqual([
      'tmux-run: run aaaa1111 exited 0 after 3 ms',
      'tmux-run: run bbbb2222 started',
      'tmux-run: something about the pane',
    ]);
  });

  it('stop ends the wait without a wake (a request carries the notice)', async () => {
    const s = shell();
    s.add('tmux-run: run aaaa1111 started');
    s.wait.stop();
    await sleep(NOTICE_WAIT_MS + 30);
    expect(s.drawn).toEqual([]);
  });
});
