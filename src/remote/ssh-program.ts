// The ssh program tmux-run runs for the person: `ssh` on PATH (their own), or TMUX_RUN_SSH.
export const sshProgram = (env: NodeJS.ProcessEnv = process.env): string => env.TMUX_RUN_SSH || 'ssh';
