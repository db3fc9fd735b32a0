// Which msgpackr code the framing runs under plain Node (not vitest's resolver): the plain
// JavaScript build the build copies into generated/msgpackr.cjs (scripts/build-vendored.mjs),
// without the native addon the package's main entry pulls in; and msgpackr is no dependency of
// an install (package.json), so that an install never fetches msgpackr-extract.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
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

describe('the msgpackr of the framing', () => {
  it('is the copy of msgpackr/dist/index.js in dist/generated, and loads no native addon', () => {
    const r = underNode(`${loaded}
      await import('./dist/src/core/protocol/framing.js');
      process.stdout.write(JSON.stringify(cache()));`) as string[];
    expect(r).toEqual([join(ROOT, 'dist', 'generated', 'msgpackr.cjs')]);
    const copy = readFileSync(join(ROOT, 'dist', 'generated', 'msgpackr.cjs'), 'utf8');
    expect(copy.slice(copy.indexOf('\n') + 1)).toBe(
      readFileSync(join(ROOT, 'node_modules', 'msgpackr', 'dist', 'index.js'), 'utf8'),
    );
  });

  it('is needed at build time only: msgpackr is a devDependency', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect(Object.keys(pkg.dependencies ?? {})).not.toContain('msgpackr');
    expect(Object.keys(pkg.devDependencies ?? {})).toContain('msgpackr');
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
