// How long tmux-run-mcp takes to answer `initialize`, beside a bare Node that answers one line:
// every client session starts the server, and clients start their servers at launch (issue 42).
// Both are spawned alternately, each sent an `initialize` request at once, and timed from the
// spawn to the first line on stdout; and, in turn, each one's CPU (user + system, from bash's
// `times`), which moves less with the load of a shared machine. Each server is also timed to its
// answer to a first call (a client's whole start at once: initialize, tools/list, then
// tmux_enrolled_panes), which the server answers once it has loaded the MCP SDK's server and the
// broker (src/mcp/front.ts). Run alone for an A/B of builds side by side:
//   npx tsx scripts/bench/bench-initialize.ts [rounds] [bin/tmux-run-mcp.js ...]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { now, stats, type Stats } from './bench-common.js';

/** The target: the server's answer within this many times a bare Node's. */
export const INITIALIZE_RATIO_TARGET = 1.5;

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
})}\n`;

/** A client's start and its first call, at once: the answer to the call is the third line. */
const FIRST_CALL = [
  INITIALIZE,
  `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
  `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`,
  `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'tmux_enrolled_panes', arguments: {} } })}\n`,
].join('');

/** A Node that answers the first line it reads with one line: the floor of any stdio server. */
const BARE_NODE = [
  '-e',
  `process.stdin.once('data', () => process.stdout.write('{"jsonrpc":"2.0","id":0,"result":{}}\\n', () => process.exit(0)));`,
];

export const SERVER_BIN = fileURLToPath(new URL('../../bin/tmux-run-mcp.js', import.meta.url));

/** Spawn to the `lines`th line on stdout (sent `input`), in ms; the process is ended once it answered. */
function answerMs(args: string[], env: NodeJS.ProcessEnv, input = INITIALIZE, lines = 1): Promise<number> {
  return new Promise((done, fail) => {
    const t0 = now();
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env });
    let out = '';
    let ms: number | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (ms === undefined && out.split('\n').length > lines) {
        ms = now() - t0;
        const last = out.split('\n')[lines - 1]!;
        if (!last.startsWith('{"') || !last.includes(`"id":${lines - 1}`))
          fail(new Error(`not an answer: ${last.slice(0, 200)}`));
        child.stdin.end();
      }
    });
    child.once('error', fail);
    child.once('exit', (code) => (ms === undefined ? fail(new Error(`exited (${code}) without answering`)) : done(ms)));
    child.stdin.on('error', () => {});
    child.stdin.write(input);
  });
}

/**
 * The CPU (user + system) a process spent answering, from bash's `times` after it exited: on a
 * machine that others share, CPU moves less than wall time with their load.
 */
function answerCpuMs(args: string[], env: NodeJS.ProcessEnv): number {
  const quoted = [process.execPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const out = execFileSync('bash', ['-c', `${quoted} <<< "$1" > /dev/null; times`, 'bash', INITIALIZE.trim()], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // Its second line: the children's user and system time, "0m0.058s 0m0.007s".
  const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(out.trim());
  if (!m) throw new Error(`bash's times said ${JSON.stringify(out)}`);
  return (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000;
}

export interface InitializeFigures {
  bare_node_ms: Stats;
  /** The bare Node's CPU to answer (and exit at its stdin's end), alternating the same way. */
  bare_node_cpu_ms: Stats;
  /** One entry per server binary measured, in the order given. */
  servers: Array<{ bin: string; ms: Stats; ratio: number; cpu_ms: Stats; cpu_ratio: number; first_call_ms: Stats }>;
}

/** `rounds` rounds, each a bare Node then each server in turn (one after the other, not at once). */
export async function initializeCost(rounds: number, bins: string[] = [SERVER_BIN]): Promise<InitializeFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'tmux-run-bench-init-'));
  const env = { ...process.env, TMUX_RUN_DIR: join(dir, 'registry'), XDG_STATE_HOME: join(dir, 'state') };
  try {
    const bare: number[] = [];
    const bareCpu: number[] = [];
    const servers = bins.map(() => [] as number[]);
    const serversCpu = bins.map(() => [] as number[]);
    const firstCalls = bins.map(() => [] as number[]);
    // One of each first, not counted: the files are then in the page cache for all.
    await answerMs(BARE_NODE, env);
    for (const bin of bins) await answerMs([bin], env);
    for (let i = 0; i < rounds; i++) {
      bare.push(await answerMs(BARE_NODE, env));
      for (const [k, bin] of bins.entries()) servers[k]!.push(await answerMs([bin], env));
      bareCpu.push(answerCpuMs(BARE_NODE, env));
      for (const [k, bin] of bins.entries()) serversCpu[k]!.push(answerCpuMs([bin], env));
      for (const [k, bin] of bins.entries()) firstCalls[k]!.push(await answerMs([bin], env, FIRST_CALL, 3));
    }
    const bareStats = stats(bare);
    const bareCpuStats = stats(bareCpu);
    return {
      bare_node_ms: bareStats,
      bare_node_cpu_ms: bareCpuStats,
      servers: bins.map((bin, k) => {
        const ms = stats(servers[k]!);
        const cpu = stats(serversCpu[k]!);
        return {
          bin,
          ms,
          ratio: ms.median / bareStats.median,
          cpu_ms: cpu,
          cpu_ratio: cpu.median / bareCpuStats.median,
          first_call_ms: stats(firstCalls[k]!),
        };
      }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rounds = Number(process.argv[2] ?? 12);
  const bins = process.argv.slice(3).map((b) => resolve(b));
  const f = await initializeCost(rounds, bins.length > 0 ? bins : [SERVER_BIN]);
  const row = (name: string, s: Stats, extra = ''): string =>
    `${name}: median ${s.median.toFixed(1)} ms, p90 ${s.p90.toFixed(1)}, min ${s.min.toFixed(1)}, n ${s.n}${extra}`;
  process.stdout.write(`${row('bare node', f.bare_node_ms)}\n${row('  its CPU', f.bare_node_cpu_ms)}\n`);
  for (const s of f.servers)
    process.stdout.write(
      `${row(s.bin, s.ms, `; ${s.ratio.toFixed(2)}x bare node (target ${INITIALIZE_RATIO_TARGET}x: ${s.ratio <= INITIALIZE_RATIO_TARGET ? 'pass' : 'MISS'})`)}\n` +
        `${row('  its CPU', s.cpu_ms, `; ${s.cpu_ratio.toFixed(2)}x bare node's`)}\n` +
        `${row('  to its answer to a first call (initialize, tools/list, tmux_enrolled_panes at once)', s.first_call_ms)}\n`,
    );
}

/** The report's target row: the server's answer within INITIALIZE_RATIO_TARGET times a bare Node's. */
export function initializeTargets(m: {
  initialize?: InitializeFigures;
}): Array<{ name: string; target: string; value: number; pass: boolean; show: string }> {
  const f = m.initialize;
  const s = f?.servers[0];
  if (!f || !s) return [];
  return [
    {
      name: 'initialize vs bare node (tmux-run-mcp answering initialize / a bare Node answering one line, medians, alternating)',
      target: `<= ${INITIALIZE_RATIO_TARGET}x`,
      value: s.ratio,
      pass: s.ratio <= INITIALIZE_RATIO_TARGET,
      show: `${s.ratio.toFixed(2)}x (${s.ms.median.toFixed(0)} / ${f.bare_node_ms.median.toFixed(0)} ms; CPU ${s.cpu_ratio.toFixed(2)}x; a first call answered at ${s.first_call_ms.median.toFixed(0)} ms)`,
    },
  ];
}
