// A small argument parser: long options (`--name`, `--name value`, `--name=value`), positional
// arguments, `--` to end options; anything it does not know is a UsageError.
import { UsageError } from './common/errors.js';
import { escapeControls } from '../broker/escape.js';

export interface ArgSpec {
  /** Long option names (without `--`): true when the option takes a value. */
  options: Record<string, boolean>;
  /** Names of the positional arguments, in order (for messages). */
  positionals?: string[];
  /** How many positionals are required (default: all of them). */
  required?: number;
}

export interface ParsedArgs {
  /** Present options: `true` for flags, the text for options with a value. */
  options: Map<string, string | true>;
  positionals: string[];
}

/** True when `-h` or `--help` appears before any `--`: help wins over every other mistake. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
}

/** Parses `argv` for one command; throws UsageError naming the offending argument. */
export function parseArgs(command: string, spec: ArgSpec, argv: readonly string[]): ParsedArgs {
  const options = new Map<string, string | true>();
  const positionals: string[] = [];
  const names = spec.positionals ?? [];
  const show = (s: string): string => escapeControls(s);
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!onlyPositionals && arg === '--') {
      onlyPositionals = true;
      continue;
    }
    if (!onlyPositionals && arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = arg.slice(2, eq < 0 ? undefined : eq);
      const takesValue = spec.options[name];
      if (takesValue === undefined || !Object.hasOwn(spec.options, name)) {
        throw new UsageError(`${command}: unknown option --${show(name)}`);
      }
      if (options.has(name)) throw new UsageError(`${command}: option --${name} given twice`);
      if (!takesValue) {
        if (eq >= 0) throw new UsageError(`${command}: option --${name} takes no value`);
        options.set(name, true);
        continue;
      }
      let value: string | undefined;
      if (eq >= 0) value = arg.slice(eq + 1);
      else {
        value = argv[i + 1];
        if (value === undefined || value.startsWith('--'))
          throw new UsageError(`${command}: option --${name} needs a value`);
        i++;
      }
      if (value === '') throw new UsageError(`${command}: option --${name} needs a value`);
      options.set(name, value);
      continue;
    }
    if (!onlyPositionals && arg.startsWith('-') && arg !== '-') {
      throw new UsageError(`${command}: unknown option ${show(arg)}`);
    }
    if (positionals.length >= names.length) {
      throw new UsageError(`${command}: unexpected argument '${show(arg)}'`);
    }
    positionals.push(arg);
  }
  const required = spec.required ?? names.length;
  if (positionals.length < required) {
    throw new UsageError(`${command}: missing argument ${names[positionals.length] ?? ''}`.trimEnd());
  }
  return { options, positionals };
}
