// What the escape suites share (test/sandbox/escape*.test.ts): the fixture whose person has an
// "agent", a session bus and a runtime directory (real listening sockets outside /tmp), and the
// helpers that look for what a run planted.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TmuxServer } from '../../lab/server.js';
import { listen, type Listener, type SandboxFixture, useSandboxFixture } from './support.js';

/** The person's sockets and runtime directory, made before the pane is enrolled. */
export interface PersonSockets {
  agent: Listener;
  bus: Listener;
  runtimeDir: string;
}

/** The escape suites' fixture: a pane whose environment names the person's agent, bus and runtime directory. */
export function useEscapeFixture(): { fx: () => SandboxFixture; sockets: () => PersonSockets } {
  let sockets: PersonSockets | undefined;
  const fx = useSandboxFixture({
    prepare: async (scope) => {
      const base = scope.server.baseDir;
      const runtimeDir = join(base, 'xdg-runtime');
      mkdirSync(runtimeDir, { mode: 0o700 });
      writeFileSync(join(runtimeDir, 'keyring-secret'), 'RUNTIME-SECRET\n', { mode: 0o600 });
      mkdirSync(join(scope.server.home, '.1password'), { mode: 0o700 });
      const agent = await listen(join(scope.server.home, '.1password', 'agent.sock'));
      const bus = await listen(join(runtimeDir, 'bus'));
      scope.defer(() => agent.close());
      scope.defer(() => bus.close());
      sockets = { agent, bus, runtimeDir };
      return {
        SSH_AUTH_SOCK: agent.address,
        DBUS_SESSION_BUS_ADDRESS: `unix:path=${bus.address}`,
        XDG_RUNTIME_DIR: runtimeDir,
      };
    },
  });
  return {
    fx,
    sockets: () => {
      if (!sockets) throw new Error('the escape fixture starts in beforeAll');
      return sockets;
    },
  };
}

export const out = (d: Record<string, any>): string => `${d.stdout.data as string}${d.stderr.data as string}`;

/** `git init` as the person would, with the test HOME (git's hooks/*.sample come with it). */
export function gitInit(server: TmuxServer, dir: string): void {
  execFileSync('git', ['init', '-q', dir], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: server.home, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

/** `ps` lines (pid, parent, group, session, state, argv cut short) of the given processes. */
export function psOf(pids: number[]): string {
  try {
    const text = execFileSync('ps', ['-o', 'pid,ppid,pgid,sid,stat,args', '-p', pids.join(',')], { encoding: 'utf8' });
    return text
      .split('\n')
      .map((l) => l.slice(0, 160))
      .join('\n');
  } catch {
    return `(pids ${pids.join(' ')} gone by the time ps looked)`;
  }
}

/** Every file under dir (recursively, not following symlinks), as paths relative to dir. */
export function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel === '' ? e.name : join(rel, e.name);
      if (e.isDirectory()) walk(p);
      else found.push(p);
    }
  };
  walk('');
  return found.sort();
}

/** What a planted hook or config leaves in the person's tree: hook files that git did not put there, config text naming hooksPath. */
export function plantedIn(dir: string): string[] {
  return filesUnder(dir).filter(
    (p) =>
      (/(^|\/)hooks\//.test(p) && !p.endsWith('.sample')) ||
      (/(^|\/)config$/.test(p) && readFileSync(join(dir, p), 'utf8').includes('hooksPath')),
  );
}

export const HOOK = `printf '#!/bin/sh\\necho pwned\\n'`;
