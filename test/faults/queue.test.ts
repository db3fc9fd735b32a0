// Semantics 8: one run at a time per pane in arrival order, shared by every broker; panes in parallel.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import { withServer } from '../../lab/lifecycle.js';
import { callWith } from './support.js';
import type { PaneListing } from '../../src/broker/registry.js';

interface Span {
  tag: string;
  start: number;
  end: number;
}

// A script that notes when it starts and ends, both in its stdout and in a shared log.
const spanScript = (tag: string, log: string, secs: number): string =>
  `s=$(date +%s.%N); echo "start ${tag} $s" >> '${log}'; sleep ${secs}; e=$(date +%s.%N); echo "end ${tag} $e" >> '${log}'; echo "${tag} $s $e"`;

const spanOf = (stdout: string): Span => {
  const [tag, s, e] = stdout.trim().split(' ');
  return { tag: tag!, start: Number(s), end: Number(e) };
};

// No two spans overlap.
function expectDisjoint(spans: Span[]): void {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++)
    expect(sorted[i]!.start, `${sorted[i]!.tag} starts before ${sorted[i - 1]!.tag} ends`).toBeGreaterThanOrEqual(
      sorted[i - 1]!.end,
    );
}

describe('the per-pane queue', () => {
  it('runs 5 concurrent calls on one pane one at a time, in call order', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const log = join(markerDir(server), 'spans.log');
      const calls = [0, 1, 2, 3, 4].map((i) => callWith(mcp, listing, spanScript(`r${i}`, log, 0.3)));
      const results = await Promise.all(calls);
      const spans = results.map((r) => {
        expect(r.isError, JSON.stringify(r.structured)).toBe(false);
        return spanOf(r.structured.data.stdout.data);
      });
      expectDisjoint(spans);
      const byStart = [...spans].sort((a, b) => a.start - b.start).map((s) => s.tag);
      expect(byStart).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
      // The shared log agrees: start, end, start, end ... in call order.
      const lines = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ').slice(0, 2).join(' '));
      expect(lines).toEqual(['r0', 'r1', 'r2', 'r3', 'r4'].flatMap((t) => [`start ${t}`, `end ${t}`]));
    });
  });

  it('runs 8 panes in parallel, each in its own shell', async () => {
    await withServer(async (server, scope) => {
      const panes: PaneListing[] = [];
      for (let i = 0; i < 8; i++) panes.push((await enrolledPane(server)).listing);
      const mcp = await scope.startMcp();
      // A barrier: each run says it started, then waits until all eight have. Runs taken one after
      // another could never get past it (each would give up after 20 s and exit 1).
      const marks = markerDir(server);
      const barrier = `echo "$TMUX_PANE"; : > '${marks}/'"\${TMUX_PANE#%}"; i=0; while [ "$(ls '${marks}' | wc -l)" -lt 8 ]; do i=$((i+1)); [ $i -lt 400 ] || exit 1; sleep 0.05; done`;
      const results = await Promise.all(panes.map((l) => callWith(mcp, l, barrier)));
      results.forEach((r, i) => {
        expect(r.isError, JSON.stringify(r.structured)).toBe(false);
        expect(r.structured.data.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
        expect(r.structured.data.stdout.data).toBe(`${panes[i]!.pane_id}\n`);
        expect(r.structured.data.target.id).toBe(panes[i]!.pane_id);
      });
    });
  });

  it('shares one pane queue between two MCP servers: their runs never overlap', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const [a, b] = await Promise.all([scope.startMcp(), scope.startMcp()]);
      const log = join(markerDir(server), 'spans.log');
      const calls = [];
      for (let i = 0; i < 3; i++) {
        calls.push(callWith(a, listing, spanScript(`a${i}`, log, 0.25)));
        calls.push(callWith(b, listing, spanScript(`b${i}`, log, 0.25)));
      }
      const results = await Promise.all(calls);
      const spans = results.map((r) => {
        expect(r.isError, JSON.stringify(r.structured)).toBe(false);
        return spanOf(r.structured.data.stdout.data);
      });
      expect(spans.map((s) => s.tag).sort()).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
      expectDisjoint(spans);
      // Each broker's own calls keep their order.
      const order = [...spans].sort((x, y) => x.start - y.start).map((s) => s.tag);
      expect(order.filter((t) => t.startsWith('a'))).toEqual(['a0', 'a1', 'a2']);
      expect(order.filter((t) => t.startsWith('b'))).toEqual(['b0', 'b1', 'b2']);
      // The shared log never shows two starts without an end between them.
      const lines = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]);
      expect(lines).toEqual(Array.from({ length: 6 }, () => ['start', 'end']).flat());
    });
  });
});
