// Fish panes for the fish suites: a real `fish --no-config -i` started with a config file written
// here (the harness's `$ ` prompt, no greeting, and the completion marker in the pane title from
// the fish_prompt event, as zsh's precmd does it), enrolled the way a person enrolls one (typing
// `source .../tmux-run.fish`), and a fixture with one such pane and a spawned tmux-run-mcp.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { AwakeListing, PaneListing } from '../../src/broker/registry.js';
import { waitListed } from '../../lab/enrollment.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { ROOT } from '../../lab/product.js';
import { openScope, type Scope } from '../../lab/scope.js';
import type { NewPaneOptions, TmuxServer } from '../../lab/server.js';
import { checkRunResult } from '../mcp/support.js';

/** The fish snippet a person sources. */
export const FISH_SNIPPET = join(ROOT, 'shell', 'tmux-run.fish');
/** What a person types in fish to enroll the pane. */
export const FISH_SOURCE = `source ${FISH_SNIPPET}`;

/** The harness's part of every fish pane's config: prompt, no greeting or title, the marker. */
export const FISH_HARNESS = `set -g fish_greeting
set -g __harness_id (cat /proc/sys/kernel/random/uuid)
set -g __harness_prompts 0
function fish_title; end
function fish_prompt; printf '$ '; end
function __harness_marker --on-event fish_prompt
    set -l s $status
    set -g __harness_prompts (math $__harness_prompts + 1)
    printf '\\e]2;harness:%s:%s:%s\\a' $__harness_id $__harness_prompts $s
end
`;

let configs = 0;

export interface FishPaneOptions extends Omit<NewPaneOptions, 'shell' | 'zshrc'> {
  /** fish code run after the harness's (a person's config: bindings, a right prompt, handlers). */
  config?: string;
  /** The fish command line; default fish --no-config -i with the config. */
  args?: string[];
  /**
   * A full start-up instead (fish -i reading $XDG_CONFIG_HOME/fish/config.fish, written here), as
   * a person's fish starts: fish_vi_key_bindings needs it (under --no-config it takes no keys).
   */
  full?: boolean;
}

/** Opens a window running an interactive fish with the harness config (and `config`). */
export async function fishPane(server: TmuxServer, opts: FishPaneOptions = {}): Promise<Pane> {
  const n = ++configs;
  const { config, args, full, ...rest } = opts;
  const text = FISH_HARNESS + (config ?? '');
  if (full) {
    const xdg = join(server.home, `xdg-${n}`);
    mkdirSync(join(xdg, 'fish'), { recursive: true, mode: 0o700 });
    writeFileSync(join(xdg, 'fish', 'config.fish'), text, { mode: 0o600 });
    return server.newPane({ ...rest, shell: ['fish', '-i'], env: { XDG_CONFIG_HOME: xdg, ...opts.env } });
  }
  const file = join(server.home, `config-${n}.fish`);
  writeFileSync(file, text, { mode: 0o600 });
  return server.newPane({ ...rest, shell: ['fish', '--no-config', ...(args ?? ['-i']), '-C', `source ${file}`] });
}

/** Types the source line into a fish pane (it must succeed) and waits until the pane is listed. */
export async function enrollFish(pane: Pane): Promise<AwakeListing> {
  const r = await pane.runWithStatus(FISH_SOURCE, { timeoutMs: 20_000 });
  if (r.status !== 0) throw new Error(`enrolling ${pane.id} failed (status ${r.status}): ${r.output}`);
  return waitListed(pane, await pane.shellPid());
}

export interface FishFixture {
  scope: Scope;
  server: TmuxServer;
  pane: Pane;
  listing: PaneListing;
  mcp: McpHandle;
  /** Calls tmux_run on the pane (or `listing`'s); the result is checked against the contract. */
  run(script: string, listing?: PaneListing): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/** A server, one enrolled fish pane (with `config`) and a broker with tmux_run enabled. */
export async function fishFixture(opts: FishPaneOptions = {}): Promise<FishFixture> {
  const scope = await openScope();
  try {
    const pane = await fishPane(scope.server, opts);
    const listing = await enrollFish(pane);
    const mcp = await scope.startMcp();
    const fx: FishFixture = {
      scope,
      server: scope.server,
      pane,
      listing,
      mcp,
      run: async (script, l = fx.listing) => {
        const result = (await mcp.client.callTool({
          name: 'tmux_run',
          arguments: { target: { kind: 'pane', id: l.pane_id, generation: l.generation }, script },
        })) as CallToolResult;
        return checkRunResult(result);
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

/** The pane's visible screen, line ends trimmed, trailing blank lines dropped. */
export async function screenOf(pane: Pane): Promise<string> {
  const text = await pane.server.tmux(['capture-pane', '-p', '-t', pane.id]);
  return text.replace(/[ \t]+$/gm, '').replace(/\n+$/, '');
}
