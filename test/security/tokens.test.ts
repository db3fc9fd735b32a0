// Authorizations are bound to one enrollment: a token made for pane A does nothing in pane B,
// a binding for A re-signed with B's secret does nothing either, and an ended enrollment's
// authorizations do nothing in the pane's next one. The per-enrollment secret behind them never
// shows in argv, a script's environment or descriptors, logs, the audit trail or messages.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { bindingFor, enrolledPane, recordOf } from '../../lab/enrollment.js';
import { markerPath, touchScript } from '../../lab/markers.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { allCmdlines } from '../../lab/processes.js';
import { SNIPPET } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { runRequest, sendRequest } from './support.js';

describe('authorizations cross no pane or enrollment boundary', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let paneA: Pane;
  let listingB: PaneListing;
  let recA: EnrollmentRecord;
  let recB: EnrollmentRecord;
  /** Every secret any enrollment of this suite had. */
  const secrets: string[] = [];
  /** Every tool result of this suite, as JSON. */
  const results: string[] = [];

  /** Proves a script never ran, also not a little later. */
  async function expectNotRun(marker: string): Promise<void> {
    expect(existsSync(marker), `${marker} exists: the script ran`).toBe(false);
    await sleep(300);
    expect(existsSync(marker), `${marker} exists: the script ran late`).toBe(false);
  }

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    const a = await enrolledPane(server);
    const b = await enrolledPane(server);
    paneA = a.pane;
    listingB = b.listing;
    recA = recordOf(server, a.listing);
    recB = recordOf(server, b.listing);
    secrets.push(recA.secret, recB.secret);
    mcp = await scope.startMcp();
  });

  it("refuses, in pane B, a token signed with pane A's secret (for B's binding, and A's whole request)", async () => {
    expect(recA.secret).not.toBe(recB.secret);
    const marker = markerPath(server);
    const script = touchScript(marker);
    const forB = bindingFor(recB, script);
    expect(await sendRequest(recB.socket, runRequest(forB, recA.secret, script))).toMatchObject({
      type: 'error',
      code: 'unauthorized',
      ran: false,
    });
    const forA = bindingFor(recA, script);
    expect(await sendRequest(recB.socket, runRequest(forA, recA.secret, script))).toMatchObject({
      type: 'error',
      code: 'unauthorized',
      ran: false,
    });
    await expectNotRun(marker);
  });

  it("refuses, in pane B, a binding for pane A re-signed with B's secret, and any generation changed and re-signed", async () => {
    const marker = markerPath(server);
    const script = touchScript(marker);
    const forA = bindingFor(recA, script);
    expect(await sendRequest(recB.socket, runRequest(forA, recB.secret, script))).toMatchObject({
      type: 'error',
      code: 'stale_generation',
      ran: false,
    });
    // One field at a time pointing elsewhere, signed with the very secret of the helper that receives it.
    const elsewhere = [
      { pane_id: recA.pane_id },
      { enrollment_generation: recA.enrollment_generation },
      { process_generation: recA.process_generation },
      { server_generation: `${recB.server_generation}0` },
    ];
    for (const over of elsewhere) {
      const r = await sendRequest(recB.socket, runRequest(bindingFor(recB, script, over), recB.secret, script));
      expect(r, JSON.stringify(over)).toMatchObject({ type: 'error', code: 'stale_generation', ran: false });
    }
    await expectNotRun(marker);
  });

  it("refuses, in a pane's next enrollment, what was authorized for its previous one (helper and broker)", async () => {
    const marker = markerPath(server);
    const script = touchScript(marker);
    const old = recA;
    const oldListing = { pane_id: old.pane_id, generation: old.generation };
    await paneA.run('tmux_run_unenroll');
    await paneA.run(`source ${SNIPPET}`);
    const fresh = await waitUntil(
      () => {
        const l = recordsOf(server).find(
          (r) => r.pane_id === old.pane_id && r.enrollment_generation !== old.enrollment_generation,
        );
        return l;
      },
      10_000,
      "the pane's new enrollment",
    );
    secrets.push(fresh.secret);
    recA = fresh;
    expect(fresh.secret).not.toBe(old.secret);
    expect(existsSync(old.socket)).toBe(false);
    // The old authorization, intact, at the new helper.
    expect(await sendRequest(fresh.socket, runRequest(bindingFor(old, script), old.secret, script))).toMatchObject({
      code: 'unauthorized',
      ran: false,
    });
    // The old generations signed with the new secret.
    expect(await sendRequest(fresh.socket, runRequest(bindingFor(old, script), fresh.secret, script))).toMatchObject({
      code: 'stale_generation',
      ran: false,
    });
    // The broker, given the old listing, refuses before sending anything.
    const call = await callRun(mcp.client, oldListing, script);
    results.push(JSON.stringify(call.result));
    expect(call.isError).toBe(true);
    expect(call.structured.error).toMatchObject({
      code: 'stale_generation',
      delivery: 'not_sent',
      effects: { state: 'none' },
    });
    await expectNotRun(marker);
  });

  it("never shows the secret in argv, a script's environment or descriptors, the helper log, the audit trail, stderr or a result", async () => {
    const marker = markerPath(server, 'script-text');
    // Runs that succeed, fail and are refused, so every path writes what it writes.
    const env = await callRun(mcp.client, listingB, `env; : ${marker}`);
    results.push(JSON.stringify(env.result));
    expect(env.isError).toBe(false);
    const fds = await callRun(mcp.client, listingB, "find /proc/$$/fd -mindepth 1 -maxdepth 1 -printf '%f -> %l\\n'");
    results.push(JSON.stringify(fds.result));
    expect(fds.isError).toBe(false);
    const failing = await callRun(mcp.client, listingB, `echo out; echo err >&2; exit 3; : ${marker}`);
    results.push(JSON.stringify(failing.result));
    const stale = await callRun(mcp.client, { pane_id: listingB.pane_id, generation: '0'.repeat(32) }, `: ${marker}`);
    results.push(JSON.stringify(stale.result));
    const invalid = await mcp.client.callTool({
      name: 'tmux_run',
      arguments: { target: { kind: 'pane', id: '%1; rm -rf /', generation: 'x' }, script: `: ${marker}` },
    });
    results.push(JSON.stringify(invalid));

    // The script's descriptors: stdin, stdout and stderr only; nothing of the helper or the shell channel.
    const fdLines = (fds.structured.data.stdout.data as string).trim().split('\n');
    expect(fdLines.map((l) => l.split(' ')[0]).sort(), fdLines.join('; ')).toEqual(['0', '1', '2']);
    expect(fdLines).toContain('0 -> /dev/null');
    expect(fdLines.join('\n')).not.toMatch(/\.sock|\.req|\.rsp|\.json|\.log|\/pts\/|\/tty/);

    const places: Array<[string, string]> = [
      ["a script's environment", env.structured.data.stdout.data as string],
      ['the helper log of pane B', readFileSync(`${recB.channel}.log`, 'latin1')],
      ['the helper log of pane A', readFileSync(`${recA.channel}.log`, 'latin1')],
      ['the audit trail', readFileSync(join(server.env.XDG_STATE_HOME!, 'tmux-run', 'audit.jsonl'), 'latin1')],
      ["the MCP server's stderr", mcp.stderr.join('\n')],
      ['the tool results', results.join('\n')],
    ];
    for (const { pid, argv } of allCmdlines())
      places.push([`argv of pid ${pid} (${argv.replace(/\0/g, ' ').slice(0, 60)})`, argv]);
    for (const pid of [recA.helper_pid, recB.helper_pid, recA.shell_pid, recB.shell_pid, mcp.pid!]) {
      places.push([`the environment of pid ${pid}`, readFileSync(`/proc/${pid}/environ`, 'latin1')]);
    }
    for (const [where, text] of places) {
      for (const secret of secrets) {
        expect(text.includes(secret), `the secret ${secret.slice(0, 6)}... shows in ${where}`).toBe(false);
        // Also not in another common encoding.
        expect(
          text.includes(Buffer.from(secret, 'hex').toString('base64')),
          `the secret shows base64 in ${where}`,
        ).toBe(false);
      }
    }
    // The audit trail and the results carry digests, never the script text.
    expect(readFileSync(join(server.env.XDG_STATE_HOME!, 'tmux-run', 'audit.jsonl'), 'latin1')).not.toContain(marker);
    expect(stale.structured.error.message).not.toContain(marker);
    expect(JSON.stringify(invalid)).not.toContain(marker);
  });
});

/** Every readable enrollment record in the server's registry. */
function recordsOf(server: TmuxServer): EnrollmentRecord[] {
  const out: EnrollmentRecord[] = [];
  for (const name of readdirSync(server.registryDir)) {
    if (!/^[a-f0-9]{32}\.json$/.test(name)) continue;
    try {
      out.push(recordOf(server, { enrollment_generation: name.slice(0, 32) }));
    } catch {
      /* being written */
    }
  }
  return out;
}
