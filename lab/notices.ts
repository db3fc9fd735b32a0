// A run's notice lines, as every shell draws them in its pane, local or far (helper/queue/dispatch.ts
// writes them; the harness's MCP client is tmux-run-tests 1.0.0, lab/mcp.ts): written once for the
// suites that wait for one.

/** `id8`: the run id's first 8 characters. */
export const notice = {
  started: (id8: string): string => `tmux-run: run ${id8} by tmux-run-tests 1.0.0 started (script sha256 `,
  exited: (id8: string, status: number): RegExp =>
    new RegExp(`tmux-run: run ${id8} by tmux-run-tests 1\\.0\\.0 exited ${status} after \\d+ ms`),
  /** A terminal run's program turned echo off. */
  echoOff: (id8: string): string =>
    `tmux-run: run ${id8} by tmux-run-tests 1.0.0 waits for input with echo off (a password?); to answer it yourself: tmux-run attach ${id8}`,
};
