// The one switch that picks a shell's module by name: zsh (helper/shell/zsh/: zle's descriptor
// handler, FIFOs), bash and fish (helper/shell/bash/, helper/shell/fish/: the signal-woken channel
// of helper/shell/signal/). No other file names a shell; the interface they all serve is
// helper/shell/shell.ts. It sits above helper/shell/ (helper/start.ts calls it) so that the shells'
// folders import the interface and the interface's folder imports none of them.
import type { Shell, ShellPlace } from './shell/shell.js';

/** The module for the shell named `name`, or undefined for a name no module serves. */
export async function shellFor(name: string, place: ShellPlace): Promise<Shell | undefined> {
  switch (name) {
    case 'zsh': {
      const { ZshShell } = await import('./shell/zsh/zsh.js');
      return new ZshShell(place.base);
    }
    case 'bash':
      return (await import('./shell/bash/bash.js')).bashShell(place);
    case 'fish':
      return (await import('./shell/fish/fish.js')).fishShell(place);
    default:
      return undefined;
  }
}
