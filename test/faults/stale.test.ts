// Semantics 10: records left by crashed helpers are cleaned and never listed; a call aimed at one
// reaches nothing and says so.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { paneGeneration, type Generations } from '../../src/core/enrollment/generation.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import { listedPanes } from '../../lab/mcp.js';
import { processAlive } from '../../lab/processes.js';
import { withServer } from '../../lab/lifecycle.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { callWith, errorOf } from './support.js';

const hex32 = (seed: string): string => Buffer.from(seed.padEnd(16, seed)).toString('hex').slice(0, 32);

// A pid that belonged to a process that has exited.
function deadPid(): number {
  const r = spawnSync('/bin/sh', ['-c', 'echo $$']);
  const pid = Number(r.stdout.toString().trim());
  expect(processAlive(pid)).toBe(false);
  return pid;
}

describe('records of crashed helpers', () => {
  it('a plausible record for a dead helper and the record of a SIGKILLed helper are cleaned and not listed', async () => {
    await withServer(async (server, scope) => {
      const live = await enrolledPane(server);
      const killed = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);

      // A record as a crashed helper leaves it: the live pane's facts, a new enrollment, a dead helper pid.
      const rec = JSON.parse(
        readFileSync(join(server.registryDir, `${live.listing.enrollment_generation}.json`), 'utf8'),
      ) as Record<string, unknown>;
      const gen = hex32('deadbeefcafe');
      const fake = {
        ...rec,
        enrollment_generation: gen,
        generation: paneGeneration({ ...(rec as unknown as Generations), enrollment_generation: gen }),
        helper_pid: deadPid(),
        socket: join(server.registryDir, `${gen}.sock`),
        channel: join(server.registryDir, `ch.999999.${gen.slice(0, 8)}`),
        enrolled_at: new Date(Date.now() - 60_000).toISOString(),
      };
      const fakePath = join(server.registryDir, `${gen}.json`);
      writeFileSync(fakePath, JSON.stringify(fake) + '\n', { mode: 0o600 });

      // A real helper killed with SIGKILL: it cannot remove its own record.
      const killedRecord = join(server.registryDir, `${killed.listing.enrollment_generation}.json`);
      process.kill(killed.listing.helper_pid, 'SIGKILL');
      await waitUntil(() => !processAlive(killed.listing.helper_pid), 5000, 'the helper to die');
      expect(existsSync(killedRecord)).toBe(true);

      // A call aimed at the dead record reaches nothing and says nothing was sent.
      const r = errorOf(
        await callWith(mcp, { pane_id: live.listing.pane_id, generation: fake.generation }, `touch '${marks}/ran'`),
      );
      expect(r.code).toBe('helper_unreachable');
      expect(r.delivery).toBe('not_sent');
      expect(r.effects?.state).toBe('none');

      // Listing shows only the live pane and removes both stale records.
      const panes = await listedPanes(mcp.client);
      expect(panes.map((p) => p.generation)).toEqual([live.listing.generation]);
      await waitUntil(
        async () => {
          await listedPanes(mcp.client);
          return !existsSync(fakePath) && !existsSync(killedRecord);
        },
        5000,
        'the stale records to be removed',
      );
      expect(existsSync(join(server.registryDir, `${killed.listing.enrollment_generation}.sock`))).toBe(false);

      // The SIGKILLed helper's pane: its old generation is refused, nothing runs there.
      const k = errorOf(await callWith(mcp, killed.listing, `touch '${marks}/ran'`));
      expect(k.code).toBe('not_enrolled');
      expect(k.delivery).toBe('not_sent');
      // Nothing else broke: the live pane still runs.
      const ok = await callWith(mcp, live.listing, 'echo ok');
      expect(ok.structured.data?.stdout.data).toBe('ok\n');
      await sleep(200);
      expect(existsSync(join(marks, 'ran'))).toBe(false);
    });
  });
});
