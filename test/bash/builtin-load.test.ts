// Where the snippet loads the builtin from, and where it refuses to: a copy of the install whose
// builtin (or its directory) is writable by others, or is of another build, enrolls with the
// screen check, and the listing and `tmux-run panes` say why; under ble.sh (which replaces
// readline) and in a restricted bash the snippet refuses to enroll, saying so.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitListed } from '../../lab/enrollment.js';
import { callRun } from '../../lab/mcp.js';
import { ROOT } from '../../lab/product.js';
import { useServerAndBroker } from '../../lab/lifecycle.js';
import { nativeSources } from '../../scripts/native-parts.mjs';
import { runCli } from '../../lab/cli.js';
import { checkRunResult } from '../mcp/support.js';
import { bashPane, ok } from './support.js';

const copies: string[] = [];
// Registered first, so it runs after the server is closed (after-hooks run last-registered first).
afterAll(() => {
  for (const c of copies) rmSync(c, { recursive: true, force: true });
});
const file = useServerAndBroker();

/** A copy of the built install (shell/, dist/, package.json; node_modules linked), modified by `change`. */
function install(change: (root: string) => void): string {
  const root = mkdtempSync(join(file.server.home, 'install-'));
  chmodSync(root, 0o755);
  copies.push(root);
  for (const part of ['shell', 'dist', 'package.json']) cpSync(join(ROOT, part), join(root, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  change(root);
  return root;
}

/** Enrolls a bash pane from the install at `root` and returns its listing. */
async function enrollFrom(root: string) {
  const pane = await bashPane(file.server);
  const r = await pane.runWithStatus(`source ${join(root, 'shell', 'tmux-run.bash')}`, { timeoutMs: 20_000 });
  expect(r).toEqual({ status: 0, output: '' });
  return { pane, listing: await waitListed(pane, await pane.shellPid()) };
}

const so = (root: string): string => join(root, 'dist', 'generated', 'bash-line.so');

describe("the builtin's load rules", () => {
  it('a copy of the install as built: exact', async () => {
    const { pane, listing } = await enrollFrom(install(() => {}));
    expect(listing.editor_check).toBe('exact');
    await pane.kill();
  });

  it('a builtin writable by others: not loaded; the screen check, and the listing and panes say why', async () => {
    const root = install((r) => chmodSync(so(r), 0o757));
    const { pane, listing } = await enrollFrom(root);
    expect(listing.editor_check).toBe('screen');
    expect(listing.editor_check_reason).toMatch(/bash-line\.so is not safe to load from .*mode 757/);
    expect(await pane.run('type -t _tmux_run_line || echo none')).toBe('none');
    ok(checkRunResult((await callRun(file.mcp.client, listing, 'true')).result));
    const panes = await runCli(['panes'], file.server.env);
    expect(panes.stdout).toMatch(new RegExp(`^${listing.pane_id}: screen check, not exact: .*not safe to load`, 'm'));
    await pane.kill();
  });

  it('a directory writable by its group: not loaded', async () => {
    const root = install((r) => chmodSync(join(r, 'dist', 'generated'), 0o775));
    const { pane, listing } = await enrollFrom(root);
    expect(listing.editor_check).toBe('screen');
    expect(listing.editor_check_reason).toMatch(/generated is not safe to load from .*mode 775/);
    await pane.kill();
  });

  it('a builtin of another build: unloaded again, the screen check', async () => {
    const root = install((r) => {
      const cc = spawnSync(
        process.env.CC || 'cc',
        [
          '-shared',
          '-fPIC',
          '-DTMUX_RUN_BUILD="0123456789abcdef"',
          '-o',
          so(r),
          ...nativeSources(ROOT, 'bash-line.so'),
        ],
        { encoding: 'utf8' },
      );
      expect(cc.status, cc.stderr).toBe(0);
    });
    const { pane, listing } = await enrollFrom(root);
    expect(listing.editor_check).toBe('screen');
    expect(listing.editor_check_reason).toMatch(/of another build of tmux-run/);
    expect(await pane.run('type -t _tmux_run_line || echo none')).toBe('none');
    await pane.kill();
  });

  it('no builtin built: the screen check, saying so', async () => {
    const root = install((r) => rmSync(so(r)));
    const { pane, listing } = await enrollFrom(root);
    expect(listing.editor_check_reason).toMatch(/was not built/);
    await pane.kill();
  });

  it('a restricted bash (rbash, its ~/.bashrc sourcing the snippet): not enrolled, saying why', async () => {
    const rc = join(file.server.home, 'rbashrc');
    writeFileSync(rc, `PS1='$ '\nsource ${join(ROOT, 'shell', 'tmux-run.bash')}\n`);
    const pane = await file.server.newPane({ shell: ['bash', '--restricted', '--noprofile', '--rcfile', rc, '-i'] });
    await pane.waitFor((s) => /tmux-run: not enrolled: this bash is restricted \(rbash\)/.test(s));
    expect(await runCli(['panes', '--json'], file.server.env)).toMatchObject({ stdout: '[]\n' });
    await pane.kill();
  });

  it('BLE_VERSION set (as ble.sh sets it; a real ble.sh: test/bash/blesh.test.ts): not enrolled, with the reason, and nothing left', async () => {
    // What ble.sh sets once loaded (ble.pp): BLE_VERSION, BLE_ATTACHED (1 once attached), its
    // line in _ble_edit_str and cursor in _ble_edit_ind, and the blehook function.
    const rc = 'BLE_VERSION=0.4.0-devel3+abcdef0 BLE_ATTACHED=1 _ble_edit_str= _ble_edit_ind=0\nblehook() { :; }';
    const pane = await bashPane(file.server, { rc });
    const r = await pane.runWithStatus(`source ${join(ROOT, 'shell', 'tmux-run.bash')}`);
    expect(r.status).toBe(1);
    expect(r.output).toMatch(
      /^tmux-run: not enrolled: ble\.sh 0\.4\.0-devel3\+abcdef0 is loaded in this bash: it replaces readline/,
    );
    expect(await pane.run('trap -p WINCH; echo "[${PROMPT_COMMAND}]" | grep -c _tmux_run')).toBe('0');
    await pane.kill();
  });
});
