// The kernel's word on who is at the other end of a Unix socket, both ways it is read (the native
// part and perl): the pid of a child that connected, never this process's.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerCred, peerCredSource } from '../../src/core/os/peer-cred.js';

async function connectFromChild(): Promise<{ conn: Socket; childPid: number; done: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'trr-peer-'));
  const path = join(dir, 's.sock');
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, () => r()));
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const child = spawn(
    process.execPath,
    ['-e', `require('net').connect(${JSON.stringify(path)}).on('connect', () => setTimeout(() => {}, 60000))`],
    { stdio: 'ignore' },
  );
  const conn = await accepted;
  return {
    conn,
    childPid: child.pid!,
    done: () => {
      child.kill('SIGKILL');
      conn.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('peer credentials of a Unix socket', () => {
  it('is built natively here (the native part of npm run build)', () => {
    expect(peerCredSource()).toBe('native');
  });

  for (const native of [true, false]) {
    it(`names the connecting child's pid and uid (${native ? 'native' : 'perl'})`, async () => {
      const c = await connectFromChild();
      try {
        const cred = peerCred(c.conn, { native });
        expect(cred.pid).toBe(c.childPid);
        expect(cred.pid).not.toBe(process.pid);
        expect(cred.uid).toBe(process.getuid!());
      } finally {
        c.done();
      }
    });
  }
});
