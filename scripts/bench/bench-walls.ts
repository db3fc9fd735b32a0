// scripts/bench/bench-walls.ts: the spawn path and the sandbox, the tree before and after, alternating in
// one process (BENCHMARKS.md, issue 23). "Before" is the base commit's helper/run/runner.ts and
// helper/walls/sandbox.ts (a bwrap and a waiter per sandboxed run), extracted with `git archive`
// into a temporary directory; "after" is this tree's (walls kept alive per pane and policy). Each
// round times one `Run` from start() to done for every form, in turn, beside Node's own spawn of
// `/bin/sh -c true` (the floor of the same round), and this tree's walls again with the perl waiter
// (the fallback when helper/walls/walls-waiter.c is not built). Each timed run starts PACE_MS after
// the one before ended.
//
//   npx tsx scripts/bench/bench-walls.ts [--quick | --rounds N] [--base COMMIT]   # also run by scripts/bench/bench.ts
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../lab/product.js';
import { sleep } from '../../lab/waiting.js';

export const WALLS_BASE = 'b3f3627';
/** The pause after each timed run here and between the sandbox section's calls in scripts/bench/bench.ts:
 * an agent's calls are seconds apart, and the walls fork the next run's processes in it. */
export const PACE_MS = 30;

type Median = { median: number; n: number };
export interface WallsBench {
  base: string;
  floor_true: Median;
  plain_true: { before: Median; after: Median };
  sandboxed_true: { before: Median; after: Median; perl: Median };
  mid: { before: Median; after: Median };
  big: { before: Median; after: Median };
}

const median = (v: number[]): Median => {
  const s = [...v].sort((a, b) => a - b);
  return { median: s[Math.floor((s.length - 1) / 2)] ?? NaN, n: s.length };
};

// Both trees' modules are loaded at run time; this tree's types describe both (the base's RunSpec
// has `wrap` where this one has `launcher`, and its decision `wrap` where this one's has `launcher`).
type RunnerModule = typeof import('../../helper/run/runner.js');
type Decision = { ok: true; wrap?: unknown; launcher?: unknown } | { ok: false; message: string };
interface Tree {
  Run: RunnerModule['Run'];
  sandboxFor: (snapshot: unknown, record: unknown, audit: string) => Promise<Decision>;
}

/** A tree's Run and sandboxFor; `instance` loads another copy of sandbox.ts (walls and waiter of its own). */
async function loadTree(dir: string, instance = ''): Promise<Tree> {
  const runner = (await import(pathToFileURL(join(dir, 'helper/run/runner.ts')).href)) as RunnerModule;
  // helper/walls/ since the tree by boundary, helper/sandbox/ before it (a base commit's tree).
  const walls = ['helper/walls/sandbox.ts', 'helper/sandbox/sandbox.ts'].find((f) => existsSync(join(dir, f)))!;
  const sandbox = (await import(`${pathToFileURL(join(dir, walls)).href}${instance}`)) as Pick<Tree, 'sandboxFor'>;
  return { Run: runner.Run, sandboxFor: sandbox.sandboxFor };
}

/** Whether commit `base` has the file `path`. */
function gitHas(base: string, path: string): boolean {
  try {
    execFileSync('git', ['-C', ROOT, 'cat-file', '-e', `${base}:${path}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The base commit's helper/ and src/ in a temporary directory (node_modules linked), with this
 * tree's generated/ but the base's own native parts (built from its C files, when it has them: a
 * waiter speaks its own tree's protocol).
 */
function extract(base: string): string {
  const dir = mkdtempSync(join('/var/tmp', 'tmux-run-bench-base-'));
  const tar = execFileSync('git', ['-C', ROOT, 'archive', base, 'helper', 'src', 'package.json'], {
    maxBuffer: 1 << 28,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(ROOT, 'generated'), join(dir, 'generated'), { recursive: true });
  for (const name of ['spawn.node', 'walls-waiter']) rmSync(join(dir, 'generated', name), { force: true });
  // A base with its C in helper/native/ (before the tree by boundary), or with scripts/native-parts.mjs.
  const parts = ['build-native.mjs', 'native-parts.mjs'].filter((f) => gitHas(base, `scripts/${f}`));
  if (existsSync(join(dir, 'helper', 'native')) || parts.includes('native-parts.mjs')) {
    mkdirSync(join(dir, 'scripts'));
    for (const f of parts)
      writeFileSync(join(dir, 'scripts', f), execFileSync('git', ['-C', ROOT, 'show', `${base}:scripts/${f}`]));
    execFileSync(process.execPath, [join(dir, 'scripts', 'build-native.mjs')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return dir;
}

/** One run of a tree's Run from start() to done, in ms. */
async function timeRun(t: Tree, script: string, extra: Record<string, unknown> = {}): Promise<number> {
  const t0 = performance.now();
  const spec = {
    script,
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    umask: undefined,
    stdoutLimit: 1 << 19,
    stderrLimit: 1 << 16,
  };
  const r = new t.Run({ ...spec, ...extra });
  r.start();
  const o = await r.done;
  if (o.reason !== 'completed') throw new Error(`bench run ${o.reason}: ${o.error ?? ''}`);
  return performance.now() - t0;
}

function floorTrue(): Promise<number> {
  const t0 = performance.now();
  return new Promise((res) => {
    const c = spawn('/bin/sh', ['-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    c.once('close', () => res(performance.now() - t0));
  });
}

/** The sandbox's launch for a tree, for a project with a git repository (what a workspace pane has). */
async function sandboxSpec(t: Tree, project: string, home: string): Promise<Record<string, unknown>> {
  const snapshot = {
    cwd: project,
    env: { PATH: '/usr/bin:/bin', HOME: home },
    shell: { TMUX_RUN_SANDBOX: 'workspace' },
  };
  const record = { socket: join(home, 'registry', 'h.sock'), tmux_socket: join(home, 'tmux-sock') };
  const d = await t.sandboxFor(snapshot, record, join(home, 'audit.jsonl'));
  if (!d.ok) throw new Error(`no sandbox for the bench: ${d.message}`);
  return { ...(d.wrap ? { wrap: d.wrap } : { launcher: d.launcher }), cwd: project };
}

export async function wallsBench(rounds: number, base = WALLS_BASE): Promise<WallsBench> {
  const baseDir = extract(base);
  const home = mkdtempSync(join('/var/tmp', 'tmux-run-bench-walls-'));
  try {
    mkdirSync(join(home, 'registry'), { mode: 0o700 });
    const project = join(home, 'project');
    mkdirSync(join(project, 'src'), { recursive: true });
    execFileSync('git', ['init', '-q', project]);
    writeFileSync(join(project, 'src', 'a.c'), 'int main(void){return 0;}\n');
    const [before, after] = [await loadTree(baseDir), await loadTree(ROOT)];
    // This tree's walls with the perl waiter (the fallback), chosen as a helper started with
    // TMUX_RUN_SPAWN=node chooses it, at its first sandboxed run.
    const perl = await loadTree(ROOT, '?perl-waiter');
    const spawnWas = process.env.TMUX_RUN_SPAWN;
    process.env.TMUX_RUN_SPAWN = 'node';
    await sandboxSpec(perl, project, home);
    if (spawnWas === undefined) delete process.env.TMUX_RUN_SPAWN;
    else process.env.TMUX_RUN_SPAWN = spawnWas;
    const mid = 'head -c 65536 /dev/zero | tr "\\0" a';
    const big = 'head -c 262144 /dev/zero | tr "\\0" a';
    const v: Record<string, number[]> = {};
    const add = (k: string, ms: number): void => void (v[k] ??= []).push(ms);
    for (let i = 0; i < rounds + 5; i++) {
      // The walls are decided per run, as the helper does (facts, arguments), in both trees.
      const sb = [
        await sandboxSpec(before, project, home),
        await sandboxSpec(after, project, home),
        await sandboxSpec(perl, project, home),
      ];
      const m: [string, () => Promise<number>][] = [
        ['floor', floorTrue],
        ['plain_before', () => timeRun(before, 'true')],
        ['plain_after', () => timeRun(after, 'true')],
        ['sandboxed_before', () => timeRun(before, 'true', sb[0])],
        ['sandboxed_after', () => timeRun(after, 'true', sb[1])],
        ['sandboxed_perl', () => timeRun(after, 'true', sb[2])],
        ['mid_before', () => timeRun(before, mid)],
        ['mid_after', () => timeRun(after, mid)],
        ['big_before', () => timeRun(before, big)],
        ['big_after', () => timeRun(after, big)],
      ];
      for (const [k, f] of m) {
        const ms = await f();
        if (i >= 5) add(k, ms); // five warm-up rounds
        // A pause after each, as between an agent's calls: the walls fork the next run's
        // processes once a run is over, work that back to back would land on the next form.
        await sleep(PACE_MS);
      }
    }
    const get = (k: string): Median => median(v[k] ?? []);
    return {
      base,
      floor_true: get('floor'),
      plain_true: { before: get('plain_before'), after: get('plain_after') },
      sandboxed_true: { before: get('sandboxed_before'), after: get('sandboxed_after'), perl: get('sandboxed_perl') },
      mid: { before: get('mid_before'), after: get('mid_after') },
      big: { before: get('big_before'), after: get('big_after') },
    };
  } finally {
    rmSync(baseDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

/** The table scripts/bench/bench.ts prints. */
export function wallsBenchLines(b: WallsBench): string[] {
  const f = (m: Median): string => m.median.toFixed(2);
  const r = (m: Median): string => `${(m.median / b.floor_true.median).toFixed(2)}x`;
  return [
    `| spawn and sandbox, ${b.base} (before) and this tree (after), alternating in one process | before | after | n |`,
    '| --- | ---: | ---: | ---: |',
    `| floor: Node spawns /bin/sh -c true (ms) | ${f(b.floor_true)} | ${f(b.floor_true)} | ${b.floor_true.n} |`,
    `| plain true, Run start to done (ms; ratio to the floor) | ${f(b.plain_true.before)} (${r(b.plain_true.before)}) | ${f(b.plain_true.after)} (${r(b.plain_true.after)}) | ${b.plain_true.after.n} |`,
    `| sandboxed true, workspace with a git repository (ms) | ${f(b.sandboxed_true.before)} | ${f(b.sandboxed_true.after)} | ${b.sandboxed_true.after.n} |`,
    `| the same, this tree's walls with the perl waiter (TMUX_RUN_SPAWN=node) (ms) | | ${f(b.sandboxed_true.perl)} | ${b.sandboxed_true.perl.n} |`,
    `| sandboxed minus plain (ms) | ${(b.sandboxed_true.before.median - b.plain_true.before.median).toFixed(2)} | ${(b.sandboxed_true.after.median - b.plain_true.after.median).toFixed(2)} | |`,
    `| 65536 bytes of output (ms) | ${f(b.mid.before)} | ${f(b.mid.after)} | ${b.mid.after.n} |`,
    `| 262144 bytes of output (ms) | ${f(b.big.before)} | ${f(b.big.after)} | ${b.big.after.n} |`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const i = process.argv.indexOf('--base');
  const r = process.argv.indexOf('--rounds');
  const rounds = r > 0 ? Number(process.argv[r + 1]) : quick ? 20 : 100;
  const b = await wallsBench(rounds, i > 0 ? process.argv[i + 1] : WALLS_BASE);
  console.log(wallsBenchLines(b).join('\n'));
  process.exit(0);
}
