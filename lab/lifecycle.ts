// A scope per test file (useServer) or per test (withServer): set up before, closed after, and
// the test fails when anything the server or its brokers started is left.
import { afterAll, beforeAll, expect } from 'vitest';
import type { McpHandle } from './mcp.js';
import { openScope, type Scope } from './scope.js';
import type { ServerOptions, TmuxServer } from './server.js';

/**
 * One server for the test file: started before its tests (beforeAll), closed after them
 * (afterAll), which fails the file when anything it started is left. The scope is there from
 * the first beforeAll on.
 */
export function useServer(opts?: ServerOptions): Scope {
  let scope: Scope | undefined;
  beforeAll(async () => {
    scope = await openScope(opts);
  });
  afterAll(async () => {
    if (scope) expect(await scope.close()).toEqual([]);
  });
  const current = (): Scope => {
    if (scope === undefined) throw new Error('useServer: the server starts in beforeAll');
    return scope;
  };
  return {
    get server() {
      return current().server;
    },
    get brokers() {
      return current().brokers;
    },
    startMcp: (o) => current().startMcp(o),
    defer: (fn) => current().defer(fn),
    brokerLogs: () => current().brokerLogs(),
    close: () => current().close(),
  };
}

/** useServer, with one tmux-run-mcp for the file's tests, started once the server is (closed with it). */
export function useServerAndBroker(opts?: ServerOptions): Scope & { readonly mcp: McpHandle } {
  const scope = useServer(opts);
  let mcp: McpHandle | undefined;
  beforeAll(async () => {
    mcp = await scope.startMcp();
  });
  return Object.defineProperty(scope, 'mcp', {
    get: () => {
      if (mcp === undefined) throw new Error('useServerAndBroker: the broker starts in beforeAll');
      return mcp;
    },
  }) as Scope & { readonly mcp: McpHandle };
}

/** One server for one test: runs fn, then closes the scope and checks nothing is left; a failure carries the brokers' logs. */
export async function withServer(
  fn: (server: TmuxServer, scope: Scope) => Promise<void>,
  opts?: ServerOptions,
): Promise<void> {
  const scope = await openScope(opts);
  let leftovers: string[];
  try {
    await fn(scope.server, scope);
  } catch (e) {
    const logs = scope.brokerLogs();
    if (e instanceof Error && logs) e.message += `\n${logs}`;
    throw e;
  } finally {
    leftovers = await scope.close();
  }
  expect(leftovers).toEqual([]);
}
