// ble.sh as its README sets it up (`source ble.sh --attach=none` first in .bashrc, `ble-attach`
// last, the snippet after it): the pane is not enrolled, and the person is told why in the pane at
// the first prompt, although ble.sh hides what the rest of .bashrc writes to stderr; `tmux-run
// doctor` run in that pane says it too. A real ble.sh, built from its sources (ble.sh is in no
// Debian package): TMUX_RUN_TEST_BLESH=/path/to/out/ble.sh, or one installed where its
// `make install` puts it; without one these tests are skipped, saying so.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../../lab/lifecycle.js';
import { CLI_BIN } from '../../lab/product.js';
import { listEnrolled } from '../../src/broker/registry.js';
import { BASH_SNIPPET, bashPane } from './support.js';

const BLESH = [
  process.env.TMUX_RUN_TEST_BLESH,
  join(homedir(), '.local', 'share', 'blesh', 'ble.sh'),
  '/usr/local/share/blesh/ble.sh',
  '/usr/share/blesh/ble.sh',
].find((p): p is string => p !== undefined && p !== '' && existsSync(p));
if (BLESH === undefined)
  process.stderr.write(
    'test/bash/blesh.test.ts: skipped: no ble.sh here (build it from https://github.com/akinomyoga/ble.sh with `make`, then set TMUX_RUN_TEST_BLESH=.../out/ble.sh)\n',
  );

const scope = useServer();

describe.skipIf(BLESH === undefined)('ble.sh set up as its README says', () => {
  it('is not enrolled, and says why in the pane at the first prompt and in doctor there', async () => {
    const rc = [
      `source ${BLESH} --attach=none`,
      "PS1='$ '",
      '[[ ! ${BLE_VERSION-} ]] || ble-attach',
      `source ${BASH_SNIPPET}`,
    ].join('\n');
    // ble.sh wants USER set (it says so and sets it otherwise).
    const pane = await bashPane(scope.server, { rc, env: { USER: 'tmux-run-test' } });
    const why =
      /tmux-run: not enrolled: ble\.sh \S+ is loaded in this bash: it replaces readline, whose line tmux-run reads to know that the line is empty; to enroll this pane, start a bash without ble\.sh in it/;
    // Before anything is typed: the first prompt, drawn by ble.sh, with the reason above it.
    const screen = await pane.waitFor((s) => why.test(s.replace(/\n/g, '')) && s.split('\n').at(-1) === '$', 20_000);
    // Said once, on lines of its own.
    expect(screen.match(/tmux-run: not enrolled/g)).toHaveLength(1);
    expect(await listEnrolled(scope.server.registryDir)).toEqual([]);
    // doctor, typed in that pane (ble.sh runs it), names the pane and says why.
    const out = join(scope.server.home, 'doctor.out');
    await pane.type(`node ${CLI_BIN} doctor > ${out} 2>&1; echo doctor-done`, { enter: true });
    await pane.waitFor((s) => /^doctor-done$/m.test(s), 20_000);
    expect(readFileSync(out, 'utf8')).toMatch(
      new RegExp(
        `^FAIL\\s+this-pane\\s+pane ${pane.id} \\(bash pid \\d+\\) is not enrolled: ble\\.sh \\S+ is loaded in this bash`,
        'm',
      ),
    );
    await pane.kill();
  });
});
