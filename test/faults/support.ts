// What only the fault suites need: calls with abort signals and progress, the run id and error
// part of a result, and waiting for a running script's file.
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { callRun, type McpHandle, type RunCall } from '../../lab/mcp.js';
import { waitUntil } from '../../lab/waiting.js';

/** The run id a result names (its authorization), when the run was authorized. */
export function runIdOf(c: RunCall): string | undefined {
  const s = c.structured;
  return s.ok ? s.data.authorization.run_id : s.error?.effects?.authorization?.run_id;
}

/**
 * Waits for a file a running call's script writes; if the call ends first (refused, say), fails
 * with what it returned instead of a bare timeout.
 */
export async function whileRunning(call: Promise<RunCall>, path: string, ms = 8000): Promise<string> {
  let ended: RunCall | undefined;
  void call.then(
    (c) => (ended = c),
    () => undefined,
  );
  return waitUntil(
    () => {
      if (existsSync(path)) return readFileSync(path, 'utf8').trim() || undefined;
      if (ended) throw new Error(`the call ended before ${path} was written: ${JSON.stringify(ended.structured)}`);
      return undefined;
    },
    ms,
    `${path} to be written`,
  ).catch((e: Error) => {
    throw new Error(
      ended ? `the call ended before ${path} was written: ${JSON.stringify(ended.structured)}` : e.message,
    );
  });
}

/** Calls tmux_run on a pane with an abort signal and an optional progress callback. */
export function callWith(
  h: McpHandle,
  l: Pick<PaneListing, 'pane_id' | 'generation'>,
  script: string,
  o: {
    signal?: AbortSignal;
    onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
    timeout?: number;
  } = {},
): Promise<RunCall> {
  return callRun(
    h.client,
    l,
    script,
    {},
    {
      signal: o.signal,
      onprogress: o.onprogress,
      resetTimeoutOnProgress: o.onprogress !== undefined,
      timeout: o.timeout ?? 60_000,
    },
  );
}

/** The error part of a failed call (and fails the test when the call succeeded). */
export function errorOf(c: RunCall): {
  code: string;
  message: string;
  delivery: string;
  effects?: Record<string, any>;
} {
  expect(c.isError, JSON.stringify(c.structured)).toBe(true);
  const e = c.structured.error;
  // FAULTS_SHOW=1 prints what each caller saw (for reviewing the messages by eye).
  if (process.env.FAULTS_SHOW)
    console.log(
      `${expect.getState().currentTestName}: ${e.code} / ${e.delivery} / ${e.effects?.state ?? '-'} / ${JSON.stringify(e.effects?.completion ?? null)}\n  ${e.message}`,
    );
  return e;
}
