// Which msgpackr build the framing loads under plain Node (not vitest's resolver): the plain
// JavaScript one, without the native addon the package's main entry pulls in.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../lab/product.js';

function underNode(code: string): unknown {
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' }),
  );
}

const loaded = `
import { createRequire } from 'node:module';
const cache = () => Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('msgpackr'));
`;

describe('the msgpackr entry of the framing', () => {
  it("resolves 'msgpackr/pack' to msgpackr's index.js under Node, and loads no native addon", () => {
    const r = underNode(`${loaded}
      await import('./dist/src/core/protocol/framing.js');
      process.stdout.write(JSON.stringify({ entry: import.meta.resolve('msgpackr/pack'), native: cache() }));`) as {
      entry: string;
      native: string[];
    };
    expect(r.entry).toMatch(/\/msgpackr\/index\.js$/);
    expect(r.native).toEqual([]);
  });

  // msgpackr-extract is an optional dependency: where it is not installed there is nothing to load.
  const hasAddon = ((): boolean => {
    try {
      createRequire(join(ROOT, 'package.json')).resolve('msgpackr-extract');
      return true;
    } catch {
      return false;
    }
  })();
  it.runIf(hasAddon)('would load the native addon through the main entry (so the check above can fail)', () => {
    const r = underNode(`${loaded}
      await import('msgpackr');
      process.stdout.write(JSON.stringify(cache()));`) as string[];
    expect(r.some((k) => k.includes('msgpackr-extract'))).toBe(true);
  });
});
