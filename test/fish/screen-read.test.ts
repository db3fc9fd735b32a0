// The screen check's tmux call held before its read, its questions written (src/core/os/held-query.ts),
// against a real tmux server: it answers exactly as the call made at once does, it reads the pane
// when asked (text typed after it started, its questions written, and before it was asked is in its
// answer), one let go unasked ends at once, it holds nothing that is not read-only, and an answer
// is taken as soon as stdout holds all of it (answerOf). The pane's screen check
// (helper/shell/screen/pane-screen.ts) starts a spare client once the run whose screen it read is over
// (readyNext: never while a request is out), which the next request takes instead of starting
// one, which still reads the pane when asked, and which goes when the channel closes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asCommandLines, holdQuery } from '../../src/core/os/held-query.js';
import { PaneScreen } from '../../helper/shell/screen/pane-screen.js';
import { parseScreen, screenAnswered, screenArgs } from '../../helper/shell/screen/screen.js';
import { answerOf, screenQuery, type Ended } from '../../src/core/os/screen-read.js';
import { nativeSpawn, spawnKind } from '../../src/core/os/native-spawn.js';
import type { Pane } from '../../lab/pane.js';
import { cmdlineOf, descendantsOf } from '../../lab/processes.js';
import { startServer, type TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { ok } from '../mcp/support.js';
import { fishFixture } from './support.js';

let server: TmuxServer;
let pane: Pane;
beforeAll(async () => {
  server = await startServer();
  pane = await server.newPane();
});
afterAll(async () => {
  await server?.kill();
});

const heldClients = (): number[] => descendantsOf(process.pid).filter((p) => cmdlineOf(p).includes('source-file'));

describe('a held tmux client', () => {
  it('is held where the native spawn is built (as here)', () => {
    expect(spawnKind().kind).toBe('native');
    const held = holdQuery(server.socket, screenArgs(pane.id));
    expect(held).toBeDefined();
    held!.drop();
    expect(holdQuery(server.socket, ['kill-server'])).toBeUndefined();
    expect(holdQuery(server.socket, ['display-message', '-p', "it's"])).toBeUndefined();
  });

  it('answers exactly as the call made at once, and reads the pane when asked, not when it started', async () => {
    await pane.type('echo held-one');
    const held = holdQuery(server.socket, screenArgs(pane.id))!;
    // Give it time to connect before the pane changes: what it prints must still be the later screen.
    await new Promise((r) => setTimeout(r, 100));
    await pane.type(' typed-after');
    await pane.waitFor((s) => s.includes('typed-after'));
    const out = await held.ask(screenAnswered);
    expect(out).toContain('echo held-one typed-after');
    expect(out).toBe(await screenQuery(server.socket, screenArgs(pane.id)));
    expect(out).toBe(await screenQuery(server.socket, screenArgs(pane.id), screenAnswered));
    expect(parseScreen(out)!.lines).toHaveLength(Number(/ (\d+)\n/.exec(out)![1]));
    await pane.type('\x15');
  });

  it('ends at once when let go unasked, and after its answer', async () => {
    const held = holdQuery(server.socket, screenArgs(pane.id))!;
    await waitUntil(() => heldClients().length > 0 || undefined, 5000, 'the held client to start');
    held.drop();
    await waitUntil(() => heldClients().length === 0 || undefined, 5000, 'the held client to end');
    const asked = holdQuery(server.socket, screenArgs(pane.id))!;
    await asked.ask(screenAnswered);
    // Its answer is taken as soon as it is all there: the client ends just after.
    await waitUntil(() => heldClients().length === 0 || undefined, 5000, 'the asked client to end');
  });

  it('says what tmux said when the pane is gone', async () => {
    const held = holdQuery(server.socket, screenArgs('%999'))!;
    await expect(held.ask(screenAnswered)).rejects.toThrow(/can't find pane/);
  });
});

describe("a pane's screen check", () => {
  it('starts a spare client when the run is over, which the next request takes, asks when it reads, and lets go on close', async () => {
    expect(heldClients()).toEqual([]);
    const screen = new PaneScreen({ base: '/nonexistent', shellPid: 1, tmuxSocket: server.socket, paneId: pane.id });
    const prompt = { prompt: '$ ' };
    screen.prepare();
    expect(await screen.check(prompt)).toEqual({ ok: true });
    // The client asked has ended; none is started until the run is over.
    await waitUntil(() => heldClients().length === 0 || undefined, 5000, 'the asked client to end');
    await new Promise((r) => setTimeout(r, 100));
    expect(heldClients()).toEqual([]);
    screen.readyNext();
    const [spare] = await waitUntil(
      () => (heldClients().length === 1 ? heldClients() : undefined),
      5000,
      'one spare client',
    );
    // Ready again with no read since: nothing more.
    screen.readyNext();
    await new Promise((r) => setTimeout(r, 100));
    screen.prepare();
    expect(heldClients()).toEqual([spare]);
    // Typed after the spare started: its read shows it.
    await pane.type('echo later');
    await pane.waitFor((s) => s.includes('echo later'));
    expect(await screen.check(prompt)).toMatchObject({ ok: false, cause: 'line' });
    expect(heldClients()).not.toContain(spare);
    await pane.type('\x15');
    // A request out when the run's end comes (the next one already asked): no spare beside its client.
    screen.readyNext();
    screen.prepare();
    await new Promise((r) => setTimeout(r, 100));
    expect(heldClients()).toHaveLength(1);
    expect(await screen.check(prompt)).toEqual({ ok: true });
    screen.readyNext();
    await waitUntil(() => heldClients().length === 1 || undefined, 5000, 'the next spare');
    screen.close();
    await waitUntil(() => heldClients().length === 0 || undefined, 5000, 'no client left');
  });
});

describe("an enrolled fish pane's runs", () => {
  it('hold no spare client while a run goes on, and one once it is over', async () => {
    const fx = await fishFixture();
    try {
      const helper = Number(fx.listing.helper_pid);
      const clients = (): number[] => descendantsOf(helper).filter((p) => cmdlineOf(p).includes('source-file'));
      const sleeping = (): boolean => descendantsOf(helper).some((p) => cmdlineOf(p).startsWith('sleep'));
      // The probe's look at a new pane (helper/shell/screen/prompt-probe.ts) is an ask like a run's,
      // and leaves a spare like one; once served it does not look again. Waited for first: a look
      // put off by the first run would come during the second and leave its spare there.
      await waitUntil(() => clients().length === 1 || undefined, 5000, "the spare after the probe's look");
      expect(ok(await fx.run('true')).completion.exit_status).toBe(0);
      await waitUntil(() => clients().length === 1 || undefined, 5000, 'the spare after the first run');
      const run = fx.run('sleep 1.5');
      // (Should a check below fail, the call still ends with the fixture: not an unhandled rejection.)
      run.catch(() => undefined);
      await waitUntil(() => sleeping() || undefined, 5000, 'the run to start');
      // The client of the run's screen check (the spare, or one started for it) ends once its
      // answer is in, which may be just after the run has started; no other is held until the
      // run's end, so while it goes on none is left.
      await waitUntil(() => clients().length === 0 || undefined, 5000, 'no client held while the run goes on');
      expect(sleeping()).toBe(true);
      expect(ok(await run).completion.exit_status).toBe(0);
      await waitUntil(() => clients().length === 1 || undefined, 5000, 'the spare after the run');
    } finally {
      await fx.close();
    }
  });
});

describe("a client's answer (answerOf)", () => {
  /** A program that prints `text` and then does not end (as a tmux client between its answer and its exit). */
  function printsAndStays(text: string): { pid: number; stdoutFd: number; stderrFd: number; end: Promise<Ended> } {
    let exited!: (v: Ended) => void;
    const end = new Promise<Ended>((r) => (exited = r));
    const s = nativeSpawn(['/bin/sh', '-c', 'printf "$1"; exec sleep 60', 'sh', text], {}, '/', (code, signal) =>
      exited({ code, signal }),
    );
    return { ...s, end };
  }
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('is taken as soon as stdout holds all of it, before the client has ended', async () => {
    const p = printsAndStays('2 0 0 0 80 2\\n$ \\n\\n');
    const out = await answerOf(p.stdoutFd, p.stderrFd, p.end, () => screenAnswered);
    expect(out).toBe('2 0 0 0 80 2\n$ \n\n');
    expect(alive(p.pid)).toBe(true);
    process.kill(p.pid, 'SIGKILL');
    await p.end;
  });

  it('waits for the end when stdout never holds all of it, and says how it ended', async () => {
    const p = printsAndStays('2 0 0 0 80 3\\n$ \\n\\n');
    const answer = answerOf(p.stdoutFd, p.stderrFd, p.end, () => screenAnswered);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(p.pid)).toBe(true);
    process.kill(p.pid, 'SIGKILL');
    await expect(answer).rejects.toThrow(/signal 9/);
  });
});

describe('asCommandLines', () => {
  it('quotes each argument and puts each command on its line', () => {
    expect(asCommandLines(screenArgs('%3'))).toBe(
      "'display-message' '-p' '-t' '%3' '#{cursor_x} #{cursor_y} #{pane_in_mode} #{alternate_on} #{pane_width} #{pane_height}'\n'capture-pane' '-p' '-t' '%3'\n",
    );
  });

  it('refuses what is not a read-only question, and what cannot be quoted', () => {
    expect(() => asCommandLines(['send-keys', '-t', '%3', 'x'])).toThrow(/only read-only/);
    expect(() => asCommandLines(['capture-pane', '-t', '%3'])).toThrow(/only read-only/);
    expect(() => asCommandLines(['display-message', '-p', "it's"])).toThrow(/cannot be quoted/);
    expect(() => asCommandLines(['display-message', '-p', 'a\nrun-shell x'])).toThrow(/cannot be quoted/);
  });
});
