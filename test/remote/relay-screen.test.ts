// The screen check of a far pane, read by the relay (src/remote/relay-screen.ts,
// helper/remote/far-screen.ts): a real tmux server on a private socket with two panes, the relay's
// reader bound to one of them, and the far helper's reader on the other end of a link. The far end
// gets its own pane's screen and can choose nothing else: its request carries an id only.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFar, checkRelay } from '../../src/core/enrollment/remote-link.js';
import { memoryPair } from '../../src/core/protocol/transport.js';
import { RelayScreen } from '../../src/remote/relay-screen.js';
import { FarScreen } from '../../helper/remote/far-screen.js';
import { parseScreen } from '../../helper/shell/screen/screen.js';
import { startServer, type TmuxServer } from '../../lab/server.js';
import type { Pane } from '../../lab/pane.js';
import { waitUntil } from '../../lab/waiting.js';

const run = promisify(execFile);

describe("the relay reads a far pane's screen", () => {
  let server: TmuxServer;
  let mine: Pane;
  let other: Pane;

  beforeAll(async () => {
    server = await startServer();
    mine = await server.newPane();
    other = await server.newPane();
    await mine.run('echo mine-$((40+2))');
    await other.run('echo other-$((50+5))');
  });
  afterAll(async () => {
    await server?.kill();
  });

  /** The far end's reader and the relay's, on the two ends of one control link. */
  function linked(paneId: string): { far: FarScreen; relay: RelayScreen } {
    const [farEnd, relayEnd] = memoryPair();
    const far = new FarScreen();
    const relay = new RelayScreen({ tmuxSocket: server.socket, paneId });
    far.link(farEnd);
    farEnd.onmessage = (m) => far.answer(checkRelay(m));
    relayEnd.onmessage = (raw) => {
      const m = checkFar(raw);
      if (m?.type === 'read_screen') void relay.answer(relayEnd, m.id);
      else if (m?.type === 'hold_screen') relay.hold();
    };
    return { far, relay };
  }

  it("answers the far end with its own pane's screen, as the screen check reads it", async () => {
    const { far } = linked(mine.id);
    const screen = parseScreen(await far.read());
    expect(screen).toBeDefined();
    expect(screen!.width).toBeGreaterThan(0);
    expect(screen!.lines.join('\n')).toContain('mine-42');
    expect(screen!.lines.join('\n')).not.toContain('other-55');
  });

  it('takes nothing from the request but its id: no pane, no command', () => {
    expect(checkFar({ type: 'read_screen', id: 3, pane: other.id, args: ['kill-server'] })).toEqual({
      type: 'read_screen',
      id: 3,
    });
    expect(checkFar({ type: 'read_screen', id: 'x' })).toBeUndefined();
    expect(checkRelay({ type: 'screen', id: 3, out: 'a', error: 'b' })).toBeUndefined();
    expect(checkRelay({ type: 'screen', id: 3, error: 'gone' })).toEqual({ type: 'screen', id: 3, error: 'gone' });
  });

  /** The tmux clients held for this server's socket (`source-file -`, src/core/os/held-query.ts), by pid. */
  async function heldClients(): Promise<number[]> {
    const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
    return stdout
      .split('\n')
      .filter((l) => l.includes(` -S ${server.socket} source-file -`))
      .map((l) => Number(l.trim().split(' ')[0]));
  }

  it('holds one tmux client when told a read is coming, asks it at the read (the pane as it is then), and lets it go on close', async () => {
    const { far, relay } = linked(mine.id);
    far.hold();
    const [held] = await waitUntil(
      async () => ((await heldClients()).length === 1 ? heldClients() : undefined),
      5000,
      'a held client',
    );
    far.hold(); // told again before a read: no second client
    await new Promise((r) => setTimeout(r, 100));
    expect(await heldClients()).toEqual([held]);
    await mine.run('echo later-$((60+6))');
    const screen = parseScreen(await far.read());
    expect(screen!.lines.join('\n')).toContain('later-66');
    await waitUntil(async () => ((await heldClients()).length === 0 ? true : undefined), 5000, 'the held client asked');
    far.hold(); // after the read: the next one
    await waitUntil(async () => ((await heldClients()).length === 1 ? true : undefined), 5000, 'the next held client');
    relay.close();
    await waitUntil(async () => ((await heldClients()).length === 0 ? true : undefined), 5000, 'let go on close');
  });

  it('says why when the pane is gone, and a read waiting when the link closes fails', async () => {
    const gone = await server.newPane();
    const id = gone.id;
    await gone.kill();
    const { far } = linked(id);
    await expect(far.read()).rejects.toThrow(/tmux could not show the pane/);
    // A read whose answer never comes (the relay's end says nothing) fails when the link closes.
    const [farEnd] = memoryPair();
    const lonely = new FarScreen();
    lonely.link(farEnd);
    const waiting = lonely.read();
    lonely.close();
    await expect(waiting).rejects.toThrow(/closed/);
    await expect(lonely.read()).rejects.toThrow(/not up/);
  });
});
