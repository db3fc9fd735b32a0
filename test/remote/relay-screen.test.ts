// The screen check of a far pane, read by the relay (src/remote/relay-screen.ts,
// helper/remote/far-screen.ts): a real tmux server on a private socket with two panes, the relay's
// reader bound to one of them, and the far helper's reader on the other end of a link. The far end
// gets its own pane's screen and can choose nothing else: its request carries an id only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFar, checkRelay } from '../../src/core/enrollment/remote-link.js';
import { memoryPair } from '../../src/core/protocol/transport.js';
import { RelayScreen } from '../../src/remote/relay-screen.js';
import { FarScreen } from '../../helper/remote/far-screen.js';
import { parseScreen } from '../../helper/shell/screen/screen.js';
import { startServer, type TmuxServer } from '../../lab/server.js';
import type { Pane } from '../../lab/pane.js';

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
