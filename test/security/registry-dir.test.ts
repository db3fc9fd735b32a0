// The registry directory (records, sockets, shell channels) is the trust boundary between users,
// as tmux's socket directory is: every entry point checks its type, owner and mode on every use,
// and refuses a symlink, another owner, group or world access, also when the directory was
// swapped after the pane enrolled. Record files that are not the user's own 0600 regular files
// are ignored, also when they were fine when first read.
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane, recordOf } from '../../lab/enrollment.js';
import { markerPath, touchScript } from '../../lab/markers.js';
import { callRun, listedPanes, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { productEnv, SNIPPET } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { exchangePaths } from '../../lab/exchange.js';
import { useServer } from '../../lab/lifecycle.js';
import { sleep } from '../../lab/waiting.js';

describe('the registry directory is checked on every use', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let listing: PaneListing;
  let probe: Pane; // a zsh pane that is never enrolled: sourcing the snippet in it must be refused

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    ({ listing } = await enrolledPane(server));
    probe = await server.newPane();
    mcp = await scope.startMcp();
  });

  /** Every entry point refuses the directory as it is now, and nothing runs. */
  async function everyEntryPointRefuses(why: RegExp): Promise<void> {
    const marker = markerPath(server);
    const run = await callRun(mcp.client, listing, touchScript(marker));
    expect(run.isError).toBe(true);
    expect(run.structured.error).toMatchObject({
      code: 'unsafe_directory',
      delivery: 'not_sent',
      effects: { state: 'none' },
    });
    expect(run.structured.error.message).toMatch(why);

    const panes = (await mcp.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as CallToolResult;
    expect(panes.isError).toBe(true);
    expect(JSON.stringify(panes.content)).toMatch(why);
    expect((panes.structuredContent as { panes?: unknown[] } | undefined)?.panes ?? []).toEqual([]);

    for (const args of [['panes'], ['panes', '--json']]) {
      const cli = await runCli(args, productEnv(server));
      expect(cli.code, `tmux-run ${args.join(' ')}: ${cli.stderr}`).not.toBe(0);
      expect(cli.stdout).toBe('');
      expect(cli.stderr.trim().split('\n')).toHaveLength(1);
      expect(cli.stderr).toMatch(why);
    }

    const snippet = await probe.runWithStatus(`source ${SNIPPET}`, { timeoutMs: 20_000 });
    expect(snippet.status).toBe(1);
    expect(snippet.output).toMatch(/^tmux-run: not enrolled: /);
    expect(snippet.output).toMatch(why);
    expect(await probe.run('print -r -- ${+_tmux_run_helper_pid}')).toBe('0');

    expect(existsSync(marker), 'the script ran').toBe(false);
  }

  /** With the directory restored, everything works again (the refusals were about the directory). */
  async function worksAgain(): Promise<void> {
    expect((await listedPanes(mcp.client)).map((p) => p.generation)).toEqual([listing.generation]);
    const ok = await callRun(mcp.client, listing, 'echo fine');
    expect(ok.isError, JSON.stringify(ok.structured)).toBe(false);
    expect(ok.structured.data.stdout.data).toBe('fine\n');
  }

  it('refuses a directory replaced by a symlink after the pane enrolled (to a good directory of the same user)', async () => {
    // The symlink is made pointing at its own path, then swapped with the directory in one step:
    // the directory's path then names the symlink, and the symlink's old path the directory.
    const moved = `${server.registryDir}.moved`;
    symlinkSync(moved, moved);
    exchangePaths(server.registryDir, moved);
    try {
      await everyEntryPointRefuses(/symlink/);
    } finally {
      exchangePaths(server.registryDir, moved);
      unlinkSync(moved);
    }
    await worksAgain();
  });

  it('refuses a directory owned by another user (uid 65534)', async () => {
    chownSync(server.registryDir, 65534, 65534);
    try {
      await everyEntryPointRefuses(/belongs to uid 65534/);
    } finally {
      chownSync(server.registryDir, process.getuid!(), process.getgid!());
    }
    await worksAgain();
  });

  for (const mode of [0o750, 0o710, 0o701, 0o707, 0o777, 0o1777]) {
    it(`refuses a directory with mode ${mode.toString(8)} (group or world access)`, async () => {
      chmodSync(server.registryDir, mode);
      try {
        await everyEntryPointRefuses(/open to other users/);
      } finally {
        chmodSync(server.registryDir, 0o700);
      }
      await worksAgain();
    });
  }

  it('refuses a TMUX_RUN_DIR that is a symlink, a file or relative from the start', async () => {
    const good = join(server.baseDir, 'elsewhere');
    mkdirSync(good, { mode: 0o700 });
    const link = join(server.baseDir, 'link');
    symlinkSync(good, link);
    const file = join(server.baseDir, 'file');
    writeFileSync(file, '', { mode: 0o600 });
    try {
      for (const [dir, why] of [
        [link, /symlink/],
        [file, /not a directory/],
        ['relative/run', /absolute/],
      ] as const) {
        const other = await scope.startMcp({ env: { TMUX_RUN_DIR: dir } });
        try {
          const marker = markerPath(server);
          const run = await callRun(other.client, listing, touchScript(marker));
          expect(run.structured.error, dir).toMatchObject({ code: 'unsafe_directory', delivery: 'not_sent' });
          expect(run.structured.error.message).toMatch(why);
          const panes = (await other.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as CallToolResult;
          expect(panes.isError, dir).toBe(true);
          const cli = await runCli(['panes'], productEnv(server, { TMUX_RUN_DIR: dir }));
          expect(cli.code, dir).not.toBe(0);
          expect(cli.stderr).toMatch(why);
          expect(existsSync(marker)).toBe(false);
        } finally {
          await other.close();
        }
      }
    } finally {
      rmSync(good, { recursive: true, force: true });
      rmSync(link, { force: true });
      rmSync(file, { force: true });
    }
  });

  it("ignores the pane's own record once it is group-readable, owned by another user or replaced by a symlink, and uses it again when fixed", async () => {
    const rec = recordOf(server, listing);
    const path = join(server.registryDir, `${rec.enrollment_generation}.json`);
    await worksAgain(); // the broker has read and cached the record
    const spare = join(server.baseDir, 'record-copy.json');
    copyFileSync(path, spare);
    chmodSync(spare, 0o600);
    const breakings: Array<[string, () => void, () => void]> = [
      ['mode 0640', () => chmodSync(path, 0o640), () => chmodSync(path, 0o600)],
      ['mode 0604', () => chmodSync(path, 0o604), () => chmodSync(path, 0o600)],
      ['owner 65534', () => chownSync(path, 65534, 65534), () => chownSync(path, process.getuid!(), process.getgid!())],
      [
        'a symlink to a copy',
        () => (renameSync(path, `${path}.real`), symlinkSync(spare, path)),
        () => (unlinkSync(path), renameSync(`${path}.real`, path)),
      ],
    ];
    for (const [what, breakIt, fix] of breakings) {
      breakIt();
      try {
        expect(await listedPanes(mcp.client), what).toEqual([]);
        const marker = markerPath(server);
        const run = await callRun(mcp.client, listing, touchScript(marker));
        expect(run.structured.error, what).toMatchObject({ code: 'not_enrolled', delivery: 'not_sent' });
        const cli = await runCli(['panes', '--json'], productEnv(server));
        expect(JSON.parse(cli.stdout || 'null'), `${what}: ${cli.stderr}`).toEqual([]);
        await sleep(100);
        expect(existsSync(marker), what).toBe(false);
      } finally {
        fix();
      }
      // The helper watches its record; a record that is only ignored for a while is still its own.
      await worksAgain();
    }
  });

  it('ignores records that are FIFOs, directories, oversized or unparsable, without hanging', async () => {
    const name = (c: string): string => join(server.registryDir, `${c.repeat(32)}.json`);
    const fifo = name('a');
    expect(spawnSync('mkfifo', ['-m', '600', fifo]).status).toBe(0);
    mkdirSync(name('b'), { mode: 0o700 });
    writeFileSync(name('c'), `{"version":1,"pad":"${'x'.repeat(100_000)}"}`, { mode: 0o600 });
    writeFileSync(name('d'), '{"version":1,', { mode: 0o600 });
    writeFileSync(name('e'), JSON.stringify({ ...recordOf(server, listing), pane_id: '%1; rm -rf /' }), {
      mode: 0o600,
    });
    try {
      expect((await listedPanes(mcp.client)).map((p) => p.generation)).toEqual([listing.generation]);
      const cli = await runCli(['panes', '--json'], productEnv(server));
      expect((JSON.parse(cli.stdout) as PaneListing[]).map((p) => p.generation)).toEqual([listing.generation]);
      await worksAgain();
    } finally {
      for (const c of 'abcde') rmSync(name(c), { recursive: true, force: true });
    }
  });
});
