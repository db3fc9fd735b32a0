// The floor of the bench (scripts/bench/bench.ts): Node spawning /bin/sh -c SCRIPT directly, the cost
// each tmux_run figure is set against.
import { execFileSync } from 'node:child_process';
import { HELPER_FLAGS } from './bench-common.js';

// The floor runs in a fresh Node started with the helper's flags and nothing else loaded (no
// TypeScript loader, no SDK): plain JavaScript given to `node -e`. It spawns /bin/sh -c SCRIPT
// with piped stdout and stderr, collects stdout, waits for close, and prints the times as JSON.
const FLOOR_CHILD = `
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const [script, warm, n] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
function spawnSh() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    child.stdout.on('data', (c) => (bytes += c.length));
    child.stderr.on('data', () => {});
    child.once('error', reject);
    child.once('close', (code) => resolve({ ms: performance.now() - t0, bytes, code }));
  });
}
(async () => {
  const out = [];
  for (let i = 0; i < warm + n; i++) {
    const r = await spawnSh();
    if (r.code !== 0) throw new Error('floor script exited ' + r.code);
    if (i >= warm) out.push(r.ms);
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  process.stderr.write(String(e.stack || e) + '\\n');
  process.exit(1);
});
`;

/** The floor for `script`: `n` spawn times after `warm` unmeasured ones. */
export function floor(script: string, warm: number, n: number): number[] {
  const out = execFileSync(process.execPath, [...HELPER_FLAGS, '-e', FLOOR_CHILD, script, String(warm), String(n)], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  return JSON.parse(out) as number[];
}
