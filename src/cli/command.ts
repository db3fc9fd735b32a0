// What every CLI command module exports.
import type { ArgSpec, ParsedArgs } from './args.js';
import type { Io } from './common/output.js';

export interface Command {
  name: string;
  /** One line for the top-level usage. */
  summary: string;
  /** The full `--help` text, ending with a newline. */
  help: string;
  spec: ArgSpec;
  /** Runs the command; resolves the exit status. Throws CliError for a one-line failure. */
  run(args: ParsedArgs, io: Io): Promise<number>;
}
