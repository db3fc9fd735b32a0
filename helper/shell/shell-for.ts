// The one switch that picks a shell's module by name: zsh (helper/shell/zsh.ts: zle's descriptor
// handler, FIFOs) or a signal-woken shell (helper/shell/signal.ts: fish; bash through helper/shell/bash.ts). No other file
// names a shell; the interface they all serve is helper/shell/shell.ts.
import type { Shell, ShellPlace } from './shell.js';

/** The module for the shell named `name`, or undefined for a name no module serves. */
export async function shellFor(name: string, place: ShellPlace): Promise<Shell | undefined> {
  switch (name) {
    case 'zsh': {
      const { ZshShell } = await import('./zsh.js');
      return new ZshShell(place.base);
    }
    case 'bash':
      return (await import('./bash.js')).bashShell(place);
    case 'fish': {
      const { SignalShell } = await import('./signal.js');
      return new SignalShell('fish', place, {
        notices: true,
        asks: false,
        cachesPrompt: true,
        readsEarly: true,
        wakeSignal: 'SIGURG',
      });
    }
    default:
      return undefined;
  }
}
