// The fixture of the tmux_run suites: one harness server, one enrolled zsh pane and one spawned
// tmux-run-mcp (SDK Client over stdio) per file. Every tmux_run result is
// checked here against the contract's output schema with ajv, independently of the server.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { auditEntries, type AuditEntry } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerPath } from '../../lab/markers.js';
import type { McpHandle } from '../../lab/mcp.js';
import { ROOT, SHARED_CONTRACT } from '../../lab/product.js';
import { openScope } from '../../lab/scope.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;

/** The published contract; the repository's schemas/ holds copies (checked in tools.test.ts). */
export const CONTRACT_DIR = process.env.TMUX_RUN_CONTRACT_DIR ?? SHARED_CONTRACT ?? join(ROOT, 'schemas');
export const loadContract = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(CONTRACT_DIR, name), 'utf8')) as Record<string, unknown>;
export const contractInput = loadContract('tmux_run.input.schema.json');
export const contractOutput = loadContract('tmux_run.output.schema.json');

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateOutput = ajv.compile(contractOutput);

export const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** Asserts a tmux_run result is well formed (schema-valid structuredContent, a text item, isError agreeing with ok); returns the structured part. */
export function checkRunResult(result: CallToolResult): Record<string, any> {
  const s = result.structuredContent as Record<string, any> | undefined;
  expect(s, 'structuredContent').toBeDefined();
  const valid = validateOutput(s);
  expect(
    valid ? [] : validateOutput.errors,
    `structuredContent valid against the contract: ${JSON.stringify(s).slice(0, 400)}`,
  ).toEqual([]);
  const text = result.content.find((c) => c.type === 'text');
  expect(text, 'a text content item').toBeDefined();
  expect(typeof (text as { text: unknown }).text).toBe('string');
  expect((text as { text: string }).text.length).toBeGreaterThan(0);
  expect(result.isError === true).toBe(s!.ok === false);
  return s!;
}

export interface Fixture {
  server: TmuxServer;
  pane: Pane;
  listing: PaneListing;
  mcp: McpHandle;
  /** Calls tmux_run on the fixture's pane; the result is checked against the contract. */
  run(script: string, extra?: { stdout_limit?: number; stderr_limit?: number }): Promise<Record<string, any>>;
  /** Calls tmux_run with arbitrary arguments (checked the same way). */
  call(args: unknown): Promise<{ result: CallToolResult; s: Record<string, any> }>;
  /** The pane's target as tmux_enrolled_panes lists it. */
  target(): { kind: 'pane'; id: string; generation: string };
  /** A fresh path (under the server's HOME) that a script may create to prove it ran. */
  marker(): string;
  /** The pane's enrollment record as the helper published it. */
  record(): EnrollmentRecord;
  /** The audit trail as parsed objects. */
  audit(): AuditEntry[];
  /** Proves a refused script never ran: a later run in the same queue has finished, the marker is absent, and no 'start' entry names the script. */
  assertNothingRan(script: string, marker: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts the server, enrolls a pane and connects a client (with --enable-tool tmux_run unless told otherwise). */
export async function setupFixture(opts: { enable?: boolean; zshrc?: string } = {}): Promise<Fixture> {
  const scope = await openScope();
  const server = scope.server;
  try {
    const { pane, listing } = await enrolledPane(server, opts.zshrc === undefined ? undefined : { zshrc: opts.zshrc });
    const mcp = await scope.startMcp({ enable: opts.enable });
    const target = () => ({ kind: 'pane' as const, id: listing.pane_id, generation: listing.generation });
    const call = async (args: unknown) => {
      const result = (await mcp.client.callTool({
        name: 'tmux_run',
        arguments: args as Record<string, unknown>,
      })) as CallToolResult;
      return { result, s: checkRunResult(result) };
    };
    const fx: Fixture = {
      server,
      pane,
      listing,
      mcp,
      target,
      call,
      run: async (script, extra = {}) => (await call({ target: target(), script, ...extra })).s,
      marker: () => markerPath(server),
      record: () => {
        const names = readdirSync(server.registryDir).filter((n) => /^[a-f0-9]{32}\.json$/.test(n));
        const recs = names.map(
          (n) => JSON.parse(readFileSync(join(server.registryDir, n), 'utf8')) as EnrollmentRecord,
        );
        const rec = recs.find((r) => r.pane_id === pane.id && r.generation === listing.generation);
        if (!rec) throw new Error(`no record for ${pane.id} in ${server.registryDir}`);
        return rec;
      },
      audit: () => auditEntries(server),
      assertNothingRan: async (script, marker) => {
        const after = await fx.run('true');
        expect(after.ok).toBe(true);
        expect(existsSync(marker), `marker ${marker} must not exist`).toBe(false);
        const digest = sha256(Buffer.from(script, 'utf8'));
        expect(fx.audit().filter((e) => e.event === 'start' && e.script_digest === digest)).toEqual([]);
      },
      close: async () => {
        expect(await scope.close()).toEqual([]);
      },
    };
    return fx;
  } catch (e) {
    await scope.close().catch(() => {});
    throw e;
  }
}

/** Milliseconds taken by fn, with its value. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** The data of a success result; fails the test, showing the result, otherwise. */
export const ok = (s: Record<string, any>): Record<string, any> => {
  expect(s.ok, JSON.stringify(s).slice(0, 500)).toBe(true);
  return s.data;
};
