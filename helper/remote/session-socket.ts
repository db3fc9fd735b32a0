// The far end's way to its own session's socket (docs/remote.md). No environment variable of
// tmux-run's can be counted on to reach the far end (a stock Fedora or RHEL sshd drops all but the
// locale names), so the helper looks in its forward directory: each `*.sock` there is some
// session's `-R` socket, listened on by that session's sshd. It connects to each and keeps only
// the one whose listener (the kernel's peer credentials) is its login shell's parent, the sshd of
// this very session. A socket that refuses is a dead session's and is removed.
import { lstatSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { removeQuietly } from '../../src/core/enrollment/record.js';
import { peerCred } from '../../src/core/os/peer-cred.js';

export interface SessionSocket {
  path: string;
  socket: Socket;
}

/** Connects to `path`; resolves the socket, or undefined (a refused one is removed). */
function tryConnect(path: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED') removeQuietly(path);
      resolve(undefined);
    });
  });
}

/** Opens a connection to `path` whose listener is `sshdPid`, or undefined. */
export async function connectVia(path: string, sshdPid: number): Promise<Socket | undefined> {
  const s = await tryConnect(path);
  if (!s) return undefined;
  try {
    if (peerCred(s).pid === sshdPid) return s;
  } catch {
    /* cannot tell: not ours */
  }
  s.destroy();
  return undefined;
}

/** This session's socket in `dir` (its listener is `sshdPid`), connected; undefined when there is none. */
export async function findSessionSocket(dir: string, sshdPid: number, uid: number): Promise<SessionSocket | undefined> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^[0-9a-f]{32}\.sock$/.test(n));
  } catch {
    return undefined;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (!st.isSocket() || st.uid !== uid) continue;
    } catch {
      continue;
    }
    const socket = await connectVia(path, sshdPid);
    if (socket) return { path, socket };
  }
  return undefined;
}
