// The person's ssh command line, as `tmux-run ssh` and `tmux-run setup --remote` take it:
// OpenSSH's options (passed on unchanged), then DESTINATION. Which options take a value is
// OpenSSH 9's (ssh(1)); a remote command after DESTINATION, or an option that gives no
// interactive login shell, is refused: the far end is the person's interactive shell.

/** ssh's options that take a value (`-p 22`, `-p22`). */
const WITH_VALUE = new Set('BbcDEeFIiJLlmOoPpQRSWw'.split(''));
/** ssh's options that take none (they may be bundled: `-tt`, `-4A`). */
const FLAGS = new Set('46AaCfGgKkMNnqsTtVvXxYy'.split(''));
/** Options that leave no interactive login shell to enroll. */
const NO_SHELL: Record<string, string> = {
  N: 'runs no command',
  f: 'goes to the background',
  W: 'forwards stdio instead of a shell',
  O: 'controls a master instead of logging in',
  G: 'prints the configuration instead of logging in',
  V: 'prints its version',
  Q: 'queries algorithms',
  s: 'asks for a subsystem',
};

export interface SshLine {
  /** The options as given, in order (with their values). */
  options: string[];
  destination: string;
  /** What follows DESTINATION (refused by the callers that need a shell). */
  command: string[];
}

export class SshArgsError extends Error {}

/** Splits `argv` into ssh's options, DESTINATION and a command; throws SshArgsError on a malformed line. */
export function parseSshLine(argv: readonly string[]): SshLine {
  const options: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-') || a === '-') break;
    options.push(a);
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (WITH_VALUE.has(c)) {
        if (j === a.length - 1) {
          const v = argv[++i];
          if (v === undefined) throw new SshArgsError(`ssh option -${c} needs a value`);
          options.push(v);
        }
        break;
      }
      if (!FLAGS.has(c)) throw new SshArgsError(`-${c} is not an option of ssh`);
    }
  }
  const destination = argv[i];
  if (destination === undefined) throw new SshArgsError('missing DESTINATION (a host, user@host or ssh://...)');
  return { options, destination, command: argv.slice(i + 1) };
}

/** Why this line cannot give an interactive login shell to enroll, or undefined. */
export function noShellReason(line: SshLine): string | undefined {
  if (line.command.length > 0)
    return 'a remote command after DESTINATION is refused: tmux-run ssh enrolls your interactive login shell there';
  for (let k = 0; k < line.options.length; k++) {
    const a = line.options[k]!;
    if (!a.startsWith('-')) continue;
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (NO_SHELL[c]) return `ssh -${c} ${NO_SHELL[c]}: tmux-run ssh enrolls your interactive login shell`;
      if (WITH_VALUE.has(c)) break;
    }
  }
  return undefined;
}
