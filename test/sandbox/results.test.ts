// A sandboxed run is still a run of the person's live shell: it sees the cwd and the exports
// typed after enrollment (a venv, a direnv-style export), writes its build output in the cwd,
// reports its real exit status and signal with stdout and stderr apart, through tmux_run and
// tmux_run_start alike; the audit trail and tmux_enrolled_panes say which sandbox it had.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditEventually } from '../../lab/audit.js';
import { cancel, readOutput, start } from '../long/support.js';
import { waitUntil } from '../../lab/waiting.js';
import { connectCommand, fresh, listen, ran, textOf, useSandboxFixture } from './support.js';

const fx = useSandboxFixture();

describe('a sandboxed run sees the live shell', () => {
  it('sees the live cwd, an export typed after enrollment and a venv-like PATH', async () => {
    const proj = fx().project();
    const bin = join(proj, '.venv', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'venv-tool'), '#!/bin/sh\necho "tool from the venv"\n', { mode: 0o755 });
    const value = fresh('bar');
    await fx().type(
      `cd '${proj}' && export FOO=${value} VIRTUAL_ENV='${proj}/.venv' && PATH="$VIRTUAL_ENV/bin:$PATH" && TMUX_RUN_SANDBOX=workspace`,
    );
    const d = ran(await fx().run('pwd; echo "$FOO"; echo "$VIRTUAL_ENV"; command -v venv-tool; venv-tool'));
    expect(d.stdout.data).toBe(`${proj}\n${value}\n${proj}/.venv\n${bin}/venv-tool\ntool from the venv\n`);
    // An export changed later is seen by the next run, as without a sandbox.
    await fx().type(`export FOO=changed-${value}`);
    expect(ran(await fx().run('echo "$FOO"')).stdout.data).toBe(`changed-${value}\n`);
  });

  it('writes its build output in the cwd tree (created, replaced, removed), and it is there afterwards', async () => {
    const proj = fx().project();
    writeFileSync(join(proj, 'old.txt'), 'old\n');
    writeFileSync(join(proj, 'gone.txt'), 'gone\n');
    await fx().sandbox('workspace', proj);
    const d = ran(
      await fx().run(
        [
          'mkdir -p build/obj && printf "int main(void){return 0;}\\n" > build/main.c',
          'cp build/main.c build/obj/main.o && echo new > old.txt && rm gone.txt && mv build/main.c build/main2.c',
          'ls build build/obj',
        ].join('\n'),
      ),
    );
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect(textOf(join(proj, 'build', 'main2.c'))).toBe('int main(void){return 0;}\n');
    expect(textOf(join(proj, 'build', 'obj', 'main.o'))).toBe('int main(void){return 0;}\n');
    expect(textOf(join(proj, 'old.txt'))).toBe('new\n');
    expect(existsSync(join(proj, 'gone.txt'))).toBe(false);
    expect(existsSync(join(proj, 'build', 'main.c'))).toBe(false);
  });

  it('writes the paths in TMUX_RUN_SANDBOX_WRITE (colon list or zsh array) and no others', async () => {
    const { server } = fx();
    const proj = fx().project();
    const [a, b, c] = ['cache-a', 'cache-b', 'not-listed'].map((n) => join(server.home, fresh(n)));
    for (const dir of [a, b, c]) mkdirSync(dir!);
    const script = `for d in '${a}' '${b}' '${c}'; do echo x > "$d/f" && echo "ok $d"; done; true`;
    await fx().type(`cd '${proj}' && TMUX_RUN_SANDBOX=workspace TMUX_RUN_SANDBOX_WRITE='${a}:${b}'`);
    ran(await fx().run(script));
    expect([a, b, c].map((d) => existsSync(join(d!, 'f')))).toEqual([true, true, false]);
    for (const d of [a, b]) rmSync(join(d!, 'f'));
    await fx().type(`TMUX_RUN_SANDBOX_WRITE=('${b}' '${a}')`);
    ran(await fx().run(script));
    expect([a, b, c].map((d) => existsSync(join(d!, 'f')))).toEqual([true, true, false]);
    await fx().type('unset TMUX_RUN_SANDBOX_WRITE');
  });

  it('TMUX_RUN_SANDBOX_HIDE replaces the default hidden list', async () => {
    const { server, secrets } = fx();
    const proj = fx().project();
    const privateDir = join(server.home, fresh('private'));
    mkdirSync(privateDir, { mode: 0o700 });
    writeFileSync(join(privateDir, 'secret'), 'PRIVATE-SECRET\n', { mode: 0o600 });
    const script = `cat '${privateDir}/secret'; cat ~/.ssh/id_ed25519; true`;
    await fx().type(`cd '${proj}' && TMUX_RUN_SANDBOX=workspace TMUX_RUN_SANDBOX_HIDE='${privateDir}'`);
    const d = ran(await fx().run(script));
    expect(d.stdout.data).not.toContain('PRIVATE-SECRET');
    expect(d.stdout.data).toContain(secrets.keyText);
    await fx().type('unset TMUX_RUN_SANDBOX_HIDE');
    const again = ran(await fx().run(script));
    expect(again.stdout.data).toContain('PRIVATE-SECRET');
    expect(again.stdout.data).not.toContain(secrets.keyText);
  });

  it('a cwd under /tmp stays writable (the real directory, not the private /tmp)', async () => {
    const dir = mkdtempSync('/tmp/tmux-run-sbtests-cwd-');
    chmodSync(dir, 0o755);
    try {
      await fx().sandbox('workspace', dir);
      ran(await fx().run('echo built > out.txt'));
      expect(textOf(join(dir, 'out.txt'))).toBe('built\n');
    } finally {
      await fx().type(`cd '${fx().server.home}'`);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a sandboxed run reports as any run', () => {
  it.each<[string, Record<string, unknown>]>([
    ['exit 0', { state: 'exited', exit_status: 0, signal: null }],
    ['exit 3', { state: 'exited', exit_status: 3, signal: null }],
    ['exit 143', { state: 'exited', exit_status: 143, signal: null }],
    ['kill -TERM $$', { state: 'signaled', exit_status: null, signal: 15 }],
    ['kill -KILL $$', { state: 'signaled', exit_status: null, signal: 9 }],
    ['sleep 0.1 & kill -INT $$', { state: 'signaled', exit_status: null, signal: 2 }],
  ])('%s', async (script, completion) => {
    await fx().sandbox('workspace', fx().project());
    expect(ran(await fx().run(script)).completion).toEqual(completion);
  });

  it('keeps stdout and stderr apart, with stdin closed', async () => {
    await fx().sandbox('read-only', fx().project());
    const d = ran(await fx().run('cat; echo out; echo err >&2; echo out2'));
    expect(d.stdout).toEqual({ encoding: 'utf-8', data: 'out\nout2\n', bytes: 9, truncated: false });
    expect(d.stderr).toEqual({ encoding: 'utf-8', data: 'err\n', bytes: 4, truncated: false });
  });

  it('tmux_run_start runs in the sandbox too: its walls, exit status and streams', async () => {
    const { server } = fx();
    const proj = fx().project();
    const outside = join(server.home, fresh('planted'));
    await fx().sandbox('workspace', proj);
    const s = await fx().runLong(`echo x > '${outside}'; echo inside > in.txt; echo out; echo err >&2; exit 3`);
    expect(s.ok, JSON.stringify(s).slice(0, 600)).toBe(true);
    expect(s.data.completion).toEqual({ state: 'exited', exit_status: 3, signal: null });
    expect(s.data.stdout.data).toBe('out\n');
    expect(s.data.stderr.data).toMatch(/err\n$/);
    expect(existsSync(outside)).toBe(false);
    expect(textOf(join(proj, 'in.txt'))).toBe('inside\n');
    const signaled = await fx().runLong('kill -TERM $$');
    expect(signaled.data.completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
  });
});

describe('a sandboxed run is stopped as any run', () => {
  // SIGTERM, then SIGKILL after the grace, to the script's own group: a script that cleans up on
  // SIGTERM gets to, and the result is the script's own end, not bwrap's.
  const stopped = async (script: string): Promise<Record<string, any>> => {
    const { mcp, listing } = fx();
    const started = await start(mcp.client, listing, `${script}; echo up; while :; do sleep 0.1; done`);
    const runId = started.pending.run_id as string;
    await waitUntil(async () => {
      const o = await readOutput(mcp.client, listing, { run_id: runId, stream: 'stdout' });
      return o.data.data === 'up\n' || undefined;
    });
    const s = await cancel(mcp.client, listing, runId);
    expect(s.ok, JSON.stringify(s).slice(0, 600)).toBe(false);
    expect(s.error).toMatchObject({ code: 'cancelled', delivery: 'observed', effects: { state: 'known' } });
    return s.error.effects.completion as Record<string, any>;
  };

  it('a cancelled script that traps SIGTERM runs its trap and reports its own exit', async () => {
    const proj = fx().project();
    await fx().sandbox('workspace', proj);
    const completion = await stopped('trap "touch cleaned; exit 9" TERM');
    expect(completion).toEqual({ state: 'exited', exit_status: 9, signal: null });
    expect(existsSync(join(proj, 'cleaned'))).toBe(true);
  });

  it('a cancelled script that ignores SIGTERM ends by the SIGKILL that follows', async () => {
    await fx().sandbox('workspace', fx().project());
    expect(await stopped("trap '' TERM")).toEqual({ state: 'signaled', exit_status: null, signal: 9 });
  });

  it('a cancelled script that does not handle SIGTERM is signaled 15', async () => {
    await fx().sandbox('read-only', fx().project());
    expect(await stopped('true')).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
  });
});

describe('a background service in a sandboxed pane', () => {
  // A pane's runs share its walls (one network namespace per pane and policy): a service started in
  // the background answers the pane's later runs on 127.0.0.1, and without network the host's own
  // listeners on 127.0.0.1 stay out of reach all the same.
  it.each<[string, string]>([
    ['workspace', 'REFUSED'],
    ['workspace+net', 'CONNECTED'],
  ])('%s: a later run reaches it on 127.0.0.1; a listener of the host on 127.0.0.1: %s', async (mode, host) => {
    const { mcp, listing } = fx();
    const hostListener = await listen('127.0.0.1');
    try {
      await fx().sandbox(mode, fx().project());
      const port = 20000 + Math.floor(Math.random() * 20000);
      const server = `exec node -e 'require("http").createServer((q, r) => r.end("hello")).listen(${port}, "127.0.0.1", () => console.log("listening"))'`;
      const svc = await start(mcp.client, listing, server, { background: true });
      const runId = svc.pending.run_id as string;
      await waitUntil(async () => {
        const o = await readOutput(mcp.client, listing, { run_id: runId, stream: 'stdout' });
        return o.data.data === 'listening\n' || undefined;
      });
      const reach = (url: string): string =>
        `node -e 'require("http").get("${url}", (r) => r.on("data", (d) => { console.log("0 " + String(d).trim()); process.exit(0); })).on("error", () => { console.log("7"); process.exit(0); })'`;
      expect(ran(await fx().run(reach(`http://127.0.0.1:${port}/`))).stdout.data).toBe('0 hello\n');
      const seen = ran(await fx().run(connectCommand(`'${hostListener.address}'`))).stdout.data as string;
      expect(seen.split(' ')[0]!.trim()).toBe(host);
      expect(hostListener.connections > 0 ? 'CONNECTED' : 'REFUSED').toBe(host);
      expect((await cancel(mcp.client, listing, runId)).error.code).toBe('cancelled');
    } finally {
      await hostListener.close();
    }
  });
});

describe('the person sees the sandbox', () => {
  it.each<[string, string]>([
    ['workspace', 'workspace'],
    ['workspace+net', 'workspace+net'],
    ['read-only', 'read-only'],
    ['off', 'off'],
    ['', 'off'],
  ])('TMUX_RUN_SANDBOX=%j: the audit start entry records %s', async (value, recorded) => {
    const proj = fx().project();
    await fx().type(`cd '${proj}' && TMUX_RUN_SANDBOX='${value}'`);
    const d = ran(await fx().run('true'));
    const entry = await auditEventually(fx().server, d.authorization.run_id as string, (e) => e.event === 'start');
    expect(entry.sandbox).toBe(recorded);
  });

  it('tmux_enrolled_panes shows the pane’s sandbox as of its last prompt', async () => {
    await fx().sandbox('workspace+net', fx().project());
    expect((await fx().listedWhen((p) => p.sandbox === 'workspace+net')).sandbox).toBe('workspace+net');
    await fx().sandbox('read-only');
    expect((await fx().listedWhen((p) => p.sandbox === 'read-only')).sandbox).toBe('read-only');
    await fx().sandbox('off');
    expect((await fx().listedWhen((p) => p.sandbox === 'off')).sandbox).toBe('off');
  });
});
