// The walls' terminal channel, on the helper's side (helper/walls/fd-channel.c): one per helper,
// opened at its first walls with the C waiter, whose end goes to every walls as descriptor 5. A
// terminal run's child sends its pseudo-terminal's master on it, named by its spare's token; the
// run that waits for that token gets the descriptor, and one that no run waits for is closed.
import { closeSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { WaiterProgram } from './waiter.js';

interface Addon {
  open(onMaster: (token: string, fd: number) => void): number;
}

let opened: number | string | undefined;
const waiting = new Map<string, (fd: number) => void>();

function arrive(token: string, fd: number): void {
  const take = waiting.get(token);
  waiting.delete(token);
  if (take) take(fd);
  else closeSync(fd);
}

/** The walls' end of the channel (the same for every walls of this helper), or why there is none. */
export function channelFd(): number | string {
  if (opened !== undefined) return opened;
  try {
    // From helper/walls/ and dist/helper/walls/ alike, generated/ is two levels up.
    const addon = createRequire(import.meta.url)('../../generated/fd-channel.node') as Addon;
    opened = addon.open(arrive);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    opened = err.code === 'MODULE_NOT_FOUND' ? 'generated/fd-channel.node is not built' : err.message.split('\n')[0]!;
  }
  return opened;
}

/** The channel's descriptor for walls with this waiter, or why their terminal runs are refused. */
export function channelFor(waiter: WaiterProgram): number | string {
  if (waiter.kind === 'perl')
    return `a terminal run in the sandbox needs the C waiter (helper/walls/walls-waiter.c, built by npm run build), and this helper uses the perl one (${waiter.why})`;
  const fd = channelFd();
  return typeof fd === 'number' ? fd : `a terminal run in the sandbox needs the walls' terminal channel (${fd})`;
}

/** `take` gets the master the spare named by `token` sends (once); until then it waits. */
export function expectMaster(token: string, take: (fd: number) => void): void {
  waiting.set(token, take);
}

/** No master is wanted for `token` any more (its run ended): one that still comes is closed. */
export function forgetMaster(token: string): void {
  waiting.delete(token);
}
