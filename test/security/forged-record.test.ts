// Enrollment records are not trusted on their word. A record file in the registry that is valid
// JSON and 0600 but describes something else (a real pane with another shell, a helper that is
// not the shell's child, a socket someone else listens on, files outside the registry) is not
// listed, a tmux_run aimed at it runs nothing in the real pane, and cleaning it up removes
// nothing outside the registry directory.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootId, procStat } from '../../src/core/os/proc.js';
import { paneGeneration, processGeneration } from '../../src/core/enrollment/generation.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { socketTransport } from '../../src/core/protocol/transport.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane, recordOf } from '../../lab/enrollment.js';
import { markerPath, touchScript } from '../../lab/markers.js';
import { callRun, listedPanes, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { productEnv } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { sleep } from '../../lab/waiting.js';

const hex = (n: number): string => randomBytes(n).toString('hex');

describe('forged enrollment records', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let real: EnrollmentRecord;
  let listing: PaneListing;
  let other: Pane; // a zsh pane that is not enrolled
  const written: string[] = [];

  /** Writes `rec` into the registry as a helper would (0600, named after its enrollment). */
  function plant(rec: EnrollmentRecord): string {
    const path = join(server.registryDir, `${rec.enrollment_generation}.json`);
    writeFileSync(path, JSON.stringify(rec) + '\n', { mode: 0o600 });
    written.push(path);
    return path;
  }

  /** A record copied from the real one with a fresh enrollment, `over` applied, its generation made consistent. */
  function forge(over: Partial<EnrollmentRecord>): EnrollmentRecord {
    const enrollment = over.enrollment_generation ?? hex(16);
    const rec = {
      ...real,
      enrollment_generation: enrollment,
      socket: join(server.registryDir, `${enrollment}.sock`),
      secret: hex(32),
      ...over,
    };
    return { ...rec, generation: paneGeneration(rec) };
  }

  /** Only the real enrollment is listed, by the MCP tool and by the CLI. */
  async function onlyTheRealOneListed(): Promise<void> {
    expect((await listedPanes(mcp.client)).map((p) => p.generation)).toEqual([real.generation]);
    const cli = await runCli(['panes', '--json'], productEnv(server));
    expect((JSON.parse(cli.stdout) as PaneListing[]).map((p) => p.generation)).toEqual([real.generation]);
  }

  /** A tmux_run aimed at the forged record runs nothing; returns the error. */
  async function runsNothing(forged: EnrollmentRecord): Promise<Record<string, any>> {
    const marker = markerPath(server);
    const r = await callRun(
      mcp.client,
      { pane_id: forged.pane_id, generation: forged.generation },
      touchScript(marker),
    );
    expect(r.isError).toBe(true);
    await sleep(300);
    expect(existsSync(marker), 'the script ran').toBe(false);
    expect(r.structured.error.effects?.state ?? 'none').toBe('none');
    return r.structured.error;
  }

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ listing } = await enrolledPane(server));
    real = recordOf(server, listing);
    other = await server.newPane();
    mcp = await scope.startMcp();
  });

  afterAll(() => {
    for (const p of written) rmSync(p, { force: true });
  });

  it('a record naming the real pane but another shell is not listed, and a run aimed at it is refused before it is sent', async () => {
    const shellPid = await other.shellPid();
    const st = procStat(shellPid)!;
    const forged = forge({
      shell_pid: shellPid,
      shell_start: st.startTicks,
      process_generation: processGeneration(shellPid, st.startTicks, bootId()),
      socket: real.socket, // it claims the real helper's socket
      secret: real.secret, // and even knows the real secret
    });
    const path = plant(forged);
    const e = await runsNothing(forged);
    expect(e).toMatchObject({ code: 'not_enrolled', delivery: 'not_sent' });
    expect(e.message).toMatch(/not a child of its shell/);
    // The listing leaves it out and removes it as dead, but not the real enrollment's channel it names.
    await onlyTheRealOneListed();
    expect(existsSync(path)).toBe(false);
    for (const suffix of ['.req', '.rsp']) expect(existsSync(real.channel + suffix), real.channel + suffix).toBe(true);
    expect((await callRun(mcp.client, listing, 'echo still fine')).structured.data?.stdout.data).toBe('still fine\n');
  });

  it('a record whose generation is not the digest of its parts is not listed and not acted on', async () => {
    const forged = { ...forge({}), pane_id: '%424242' };
    forged.generation = real.generation.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    plant(forged);
    await onlyTheRealOneListed();
    expect(await runsNothing(forged)).toMatchObject({ code: 'not_enrolled', delivery: 'not_sent' });
  });

  it('a record under a name that is not its enrollment is ignored', async () => {
    const forged = forge({});
    const path = join(server.registryDir, `${hex(16)}.json`);
    writeFileSync(path, JSON.stringify(forged) + '\n', { mode: 0o600 });
    written.push(path);
    await onlyTheRealOneListed();
    expect(await runsNothing(forged)).toMatchObject({ code: 'stale_generation', delivery: 'not_sent' });
  });

  it('the real helper checks its own generations: a forged enrollment wired to the real socket with the real secret runs nothing', async () => {
    // Everything a same-user forger could copy: the real pane, shell, helper, secret; only the enrollment is new.
    const forged = forge({ secret: real.secret });
    plant(forged);
    symlinkSync(real.socket, join(server.registryDir, `${forged.enrollment_generation}.sock`));
    written.push(join(server.registryDir, `${forged.enrollment_generation}.sock`));
    await onlyTheRealOneListed(); // the real helper answers with its own generation
    const e = await runsNothing(forged);
    expect(e).toMatchObject({ code: 'stale_generation', delivery: 'observed' });
  });

  it('a record whose socket someone else listens on is not listed, and the impostor never receives a script', async () => {
    const seen: unknown[] = [];
    const impostors: Server[] = [];
    const listen = (rec: EnrollmentRecord, pid: number): Promise<void> => {
      const srv = createServer((c) => {
        const t = socketTransport(c);
        t.onmessage = (m) => {
          seen.push(m);
          if ((m as { type?: string }).type === 'ping') {
            t.send({
              type: 'pong',
              pid,
              shell_pid: rec.shell_pid,
              state: 'idle',
              cwd: '/',
              queued: 0,
              generation: rec.generation,
              mode: 'auto',
            });
          }
        };
      });
      impostors.push(srv);
      written.push(join(server.registryDir, `${rec.enrollment_generation}.sock`));
      return new Promise((r) => srv.listen(join(server.registryDir, `${rec.enrollment_generation}.sock`), () => r()));
    };
    try {
      // The impostor gives its own pid, or a live pid that is not a child of the shell (init).
      const own = forge({ helper_pid: process.pid });
      const notChild = forge({ helper_pid: 1 });
      for (const rec of [own, notChild]) {
        plant(rec);
        await listen(rec, rec.helper_pid);
      }
      await onlyTheRealOneListed();
      for (const rec of [own, notChild]) {
        expect(await runsNothing(rec)).toMatchObject({ code: 'not_enrolled', delivery: 'not_sent' });
      }
      expect(seen.filter((m) => (m as { type?: string }).type !== 'ping')).toEqual([]);
    } finally {
      for (const s of impostors) s.close();
    }
  });

  it('cleaning up a dead forged record removes nothing outside the registry directory', async () => {
    const victim = join(server.baseDir, 'victim');
    const victims = ['.req', '.rsp', '.env', '.sock'].map((s) => victim + s);
    for (const v of victims) writeFileSync(v, 'keep me', { mode: 0o600 });
    const dead = Number(spawnSync('/bin/sh', ['-c', 'echo $$']).stdout.toString().trim());
    const forged = forge({ helper_pid: dead, socket: `${victim}.sock`, channel: victim });
    const path = plant(forged);
    await onlyTheRealOneListed();
    // The listing removed the dead record, and only it.
    expect(existsSync(path)).toBe(false);
    for (const v of victims) expect(existsSync(v), v).toBe(true);
    expect(existsSync(real.socket)).toBe(true);
    const ok = await callRun(mcp.client, listing, 'echo still fine');
    expect(ok.structured.data?.stdout.data).toBe('still fine\n');
  });
});
