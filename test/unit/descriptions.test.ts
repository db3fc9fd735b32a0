// What the tool descriptions tell an agent about big output, services and reading output: the
// place it decides between tmux_run, `| tail` and tmux_run_start's options.
import { describe, expect, it } from 'vitest';
import { outputTool, panesTool, runTool, runsTool, startTool, waitTool } from '../../src/mcp/tools.js';

describe('tool descriptions', () => {
  it("tmux_run's sends output bigger than any limit to tmux_run_start with overflow tail, not to `| tail`", () => {
    expect(runTool.description).toMatch(/output_limit_exceeded: .*tmux_run_start with overflow "tail"/);
    expect(runTool.description).toMatch(/piping into `tail` loses/);
  });

  it('the long-run tools say when to use overflow tail, background and tmux_run_output', () => {
    expect(startTool.description).toMatch(/`overflow: "tail"`: for a run that may print more than its limit/);
    expect(startTool.description).toMatch(/`background: true`: for a service or watcher/);
    expect(startTool.description).toMatch(/Read its log with tmux_run_output/);
    expect(startTool.description).toMatch(
      /a service started there\s+answers your later runs in that pane on 127.0.0.1/,
    );
    expect(waitTool.description).toMatch(/tmux_run_output to read a stream from any offset/);
    expect(outputTool.description).toMatch(/background service's log/);
    expect(runsTool.description).toMatch(/`background`/);
  });

  it("tmux_run's says what to do on the person's refusals and with a sandboxed pane", () => {
    expect(runTool.description).toMatch(/denied: the person refused it .*do not retry it without talking to them/);
    expect(runTool.description).toMatch(/approval_timeout: the person did not answer/);
    expect(runTool.description).toMatch(/sandbox_unavailable: .*nothing ran; tell the person/);
    expect(runTool.description).toMatch(/helper_outdated: .*enroll it again/);
    expect(runTool.description).toMatch(/`sandbox` other than `off`, a write outside the allowed paths fails/);
    expect(runTool.description).toMatch(/nothing a run starts outlives it \(setsid\s+included\)/);
  });

  it("tmux_enrolled_panes' names every state and explains mode, sandbox and queued", () => {
    for (const word of ['`idle`', '`busy`', '`running`', '`awaiting_approval`', '`mode` `ask`', '`queued`'])
      expect(panesTool.description).toContain(word);
    expect(panesTool.description).toMatch(/`sandbox` other than `off` means runs are confined \(`workspace`: /);
  });
});
