// The helper's log line: to stderr, which the shell points at the channel's log (BASE.log).
export const log = (msg: string): void => {
  process.stderr.write(`${new Date().toISOString()} tmux-run-helper[${process.pid}]: ${msg}\n`);
};
