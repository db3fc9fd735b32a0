// The helper's one-file bundle (helper/bundle.ts, scripts/build-helper.mjs): the build makes it and
// its code cache; a helper runs it only when it is a safe file of this build, and otherwise loads
// from its modules, the same code, saying why in its log, never failing. Checked on a copy of the
// built dist/ (the copy's bundle marked so that a helper run from it can be told apart), started
// the way the shells start it (their flags), with no arguments: it prints its usage line and exits.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { helperFlags } from '../../scripts/helper-flags.mjs';
import { ROOT } from '../../lab/product.js';

let dir: string;
let bundle: string;
let original: string;

/** Starts the copy's helper as the shells do; its stderr. */
function start(env: Record<string, string> = {}): string {
  const r = spawnSync(process.execPath, [...helperFlags(), '--', join(dir, 'dist', 'helper', 'main.js')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  expect(r.status).toBe(2); // its usage: the helper itself ran, from one place or the other
  return r.stderr;
}

const FROM_BUNDLE = 'usage (from the bundle): main.js';
const FROM_MODULES = 'usage: main.js';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tmux-run-bundle-'));
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  bundle = join(dir, 'dist', 'generated', 'helper.cjs');
  original = readFileSync(bundle, 'utf8');
  expect(original).toContain(FROM_MODULES);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mark = (text: string): void => writeFileSync(bundle, text.replace(FROM_MODULES, FROM_BUNDLE), { mode: 0o644 });

describe("the helper's bundle", () => {
  it('is built with its code cache, and a start runs it', () => {
    expect(readFileSync(join(ROOT, 'dist', 'generated', 'helper.code-cache')).length).toBeGreaterThan(1000);
    mark(original);
    const err = start();
    expect(err).toContain(FROM_BUNDLE);
    expect(err).not.toContain('loading the helper from its modules');
  });

  it('TMUX_RUN_BUNDLE=off loads the modules, silently', () => {
    mark(original);
    const err = start({ TMUX_RUN_BUNDLE: 'off' });
    expect(err).toContain(FROM_MODULES);
    expect(err).not.toContain('loading the helper from its modules');
  });

  it('a bundle of another build, writable by others, or a symlink is not run: the modules are, and the log says why', () => {
    mark(original.replace(/build [0-9a-f]+/, 'build 0000000000000000'));
    expect(start()).toMatch(
      /loading the helper from its modules: .*helper\.cjs is of another build[^]*usage: main\.js/,
    );

    mark(original);
    chmodSync(bundle, 0o664);
    expect(start()).toMatch(/helper\.cjs is not safe to load from \(owner uid \d+, mode 664[^]*usage: main\.js/);
    chmodSync(bundle, 0o644);
    chmodSync(join(dir, 'dist', 'generated'), 0o777);
    expect(start()).toMatch(/generated is not safe to load from[^]*usage: main\.js/);
    chmodSync(join(dir, 'dist', 'generated'), 0o755);

    renameSync(bundle, `${bundle}.real`);
    symlinkSync(`${bundle}.real`, bundle);
    expect(start()).toMatch(/loading the helper from its modules: ELOOP[^]*usage: main\.js/);
    rmSync(bundle);
    renameSync(`${bundle}.real`, bundle);
    expect(start()).toContain(FROM_BUNDLE);
  });

  it('a bundle that throws as it loads: the modules start instead', () => {
    mark(original.replace('"use strict";\n', '"use strict";\nthrow new Error("a broken bundle");\n'));
    expect(start()).toMatch(/its bundle failed to load: Error: a broken bundle[^]*usage: main\.js/);
    mark(original);
  });

  it("a bundle that is someone else's is not run", () => {
    if (process.geteuid?.() !== 0) return; // only root can give a file away; as anyone else the uid check is the same line
    mark(original);
    chownSync(bundle, 12345, 12345);
    expect(start()).toMatch(/helper\.cjs is not safe to load from \(owner uid 12345[^]*usage: main\.js/);
    chownSync(bundle, 0, 0);
  });

  it('a missing bundle: the modules, and the log says to build', () => {
    rmSync(bundle);
    expect(start()).toMatch(/loading the helper from its modules: ENOENT[^]*run 'npm run build'[^]*usage: main\.js/);
    mark(original);
  });

  it('the three shells start node with the same flags (the code cache is made under them)', () => {
    expect(helperFlags('bash')).toEqual(helperFlags('zsh'));
    expect(helperFlags('fish')).toEqual(helperFlags('zsh'));
    expect(helperFlags()).toContain('--no-opt');
  });
});

// The build id the copy's bundle names is the one dist/generated/build-id.cjs holds.
it('the bundle names the build it was made from', () => {
  const id = execFileSync(
    process.execPath,
    ['-p', `require(${JSON.stringify(join(ROOT, 'dist', 'generated', 'build-id.cjs'))}).BUILD_ID`],
    {
      encoding: 'utf8',
    },
  ).trim();
  expect(readFileSync(join(ROOT, 'dist', 'generated', 'helper.cjs'), 'utf8').split('\n')[0]).toBe(
    `// tmux-run helper bundle, build ${id}`,
  );
});
