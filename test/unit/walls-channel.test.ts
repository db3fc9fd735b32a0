// The walls' terminal channel (helper/walls/fd-channel.c, helper/walls/channel.ts) against a
// real sender (python3's socket.send_fds on the walls' end, as a run's child sends its master):
// only a pseudo-terminal's master named by an awaited token reaches the helper. A slave (which
// libuv would reopen by its name, in the helper's /dev/pts: perhaps the pane's), a pipe, two
// descriptors, a malformed token or one nobody awaits are closed, never handed on.
import { spawnSync } from 'node:child_process';
import { fstatSync, closeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { channelFd, expectMaster, forgetMaster } from '../../helper/walls/channel.js';
import { terminalEcho } from '../../src/core/os/native-spawn.js';
import { waitUntil } from '../../lab/waiting.js';

const SENDER = String.raw`
import os, socket, sys
s = socket.socket(fileno=3)
m, sl = os.openpty()
r, w = os.pipe()
def send(token, fds):
    socket.send_fds(s, [("T" + token).encode()], fds)
for what in sys.argv[1:]:
    kind, token = what.split(":")
    send(token, {"slave": [sl], "pipe": [r], "two": [m, sl], "master": [m]}[kind])
`;

const hasPython = spawnSync('python3', ['-c', 'import socket; socket.send_fds'], { stdio: 'ignore' }).status === 0;
const token = (n: number): string => n.toString(16).padStart(32, '0');

describe.skipIf(typeof channelFd() !== 'number' || !hasPython)('the walls terminal channel', () => {
  it('hands on only a pty master named by an awaited token; everything else is closed', async () => {
    const got: Array<[string, number]> = [];
    const ids = [1, 2, 3, 4, 5, 6].map(token);
    for (const t of ids) expectMaster(t, (fd) => got.push([t, fd]));
    const fd = channelFd() as number;
    const r = spawnSync(
      'python3',
      [
        '-c',
        SENDER,
        `slave:${ids[0]}`,
        `pipe:${ids[1]}`,
        `two:${ids[2]}`,
        `master:${'x'.repeat(32)}`,
        `master:${token(99)}`,
        `master:${ids[5]}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit', fd] },
    );
    expect(r.status).toBe(0);
    await waitUntil(() => got.length > 0, 5000, 'the master handed on');
    await new Promise((res) => setTimeout(res, 200));
    expect(got.map(([t]) => t)).toEqual([ids[5]]);
    const master = got[0]![1];
    // A terminal's master (its echo reads through it) the helper owns now.
    expect(fstatSync(master).isCharacterDevice()).toBe(true);
    expect(terminalEcho(master)).toBe(true);
    closeSync(master);
    for (const t of ids) forgetMaster(t);
  });
});
