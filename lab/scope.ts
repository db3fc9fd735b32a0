// Set-up and teardown, written once: a scope owns one harness server and the brokers started
// for it; closing it closes the brokers, kills the server and reports whatever was left over.
// lifecycle.ts gives each test file or each test a scope; the bench and the demo open their own.
import { startMcp, type McpHandle, type McpOptions } from './mcp.js';
import { assertNoLeftovers, startServer, type ServerOptions, type TmuxServer } from './server.js';

export interface Scope {
  /** The scope's server. */
  readonly server: TmuxServer;
  /** Brokers started through this scope, in order. */
  readonly brokers: McpHandle[];
  /** Starts tmux-run-mcp for this server; it is closed before the server is killed. */
  startMcp(opts?: McpOptions): Promise<McpHandle>;
  /** Runs fn when the scope closes, before the brokers close (the last deferred first). */
  defer(fn: () => void | Promise<void>): void;
  /** The last lines each broker wrote to stderr: the best clue to a failure. */
  brokerLogs(): string;
  /** Runs the deferred clean-ups, closes the brokers, kills the server; returns the leftovers (expect []). */
  close(): Promise<string[]>;
}

class ServerScope implements Scope {
  readonly brokers: McpHandle[] = [];
  private readonly cleanups: Array<() => void | Promise<void>> = [];

  constructor(readonly server: TmuxServer) {}

  /** Starts tmux-run-mcp for this server; it is closed before the server is killed. */
  async startMcp(opts?: McpOptions): Promise<McpHandle> {
    const handle = await startMcp(this.server, opts);
    this.brokers.push(handle);
    return handle;
  }

  /** Runs fn when the scope closes, before the brokers close (the last deferred first). */
  defer(fn: () => void | Promise<void>): void {
    this.cleanups.push(fn);
  }

  /** The last lines each broker wrote to stderr: the best clue to a failure. */
  brokerLogs(): string {
    return this.brokers
      .map((b, i) => `broker ${i} (pid ${b.pid}) stderr:\n  ${b.stderr.slice(-30).join('\n  ')}`)
      .join('\n');
  }

  /** Runs the deferred clean-ups, closes the brokers, kills the server; returns the leftovers (expect []). */
  async close(): Promise<string[]> {
    for (const fn of this.cleanups.splice(0).reverse()) await fn();
    for (const b of this.brokers.splice(0)) await b.close();
    await this.server.kill();
    return assertNoLeftovers(this.server);
  }
}

/** Starts a server and returns its scope. */
export async function openScope(opts?: ServerOptions): Promise<Scope> {
  return new ServerScope(await startServer(opts));
}
