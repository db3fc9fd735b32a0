// The two ways a command fails: bad usage (exit 2) and everything else (exit 1).

/** A failure with the exit status it should produce; the message is one line, without the prefix. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
  }
}

/** The command line itself is wrong: unknown option, missing or extra argument (exit 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
  }
}
