# tmux-run-remote.zsh: the far end's start-up file for zsh (docs/remote.md). The line
# `tmux-run setup --remote` adds to ~/.zshrc sources it with the forward directory:
#
#   source ~/.local/share/tmux-run/app/shell/remote/tmux-run-remote.zsh FORWARD-DIR
#
# It enrolls the shell only in a session started by `tmux-run ssh`: an interactive ssh login
# whose forward directory holds a session socket. The helper then keeps only the socket its own
# sshd listens on (helper/remote/session-socket.ts); in any other login it ends silently. A plain
# ssh login finds no socket made since its own sshd started: nothing starts, nothing is printed.
[[ -o interactive && -n ${SSH_CONNECTION-} && -z ${_tmux_run_helper_pid-} ]] || return 0
() {
  emulate -L zsh
  setopt local_options extended_glob
  [[ $1 == /* && -d $1 && ! -L $1 && -O $1 ]] || return 1
  # Only sockets made since this session's sshd (the shell's parent) started: a session's forward
  # is set up after its sshd starts, so another session's socket, live or stale, is older (to the
  # second). Read from /proc without a fork: the parent's start (field 22, in USER_HZ, 100 on
  # Linux) after boot (btime).
  zmodload -F zsh/datetime p:EPOCHSECONDS 2>/dev/null || return 1
  local stat btime
  stat=$(</proc/$PPID/stat) btime=${${(M)${(f)"$(</proc/stat)"}:#btime *}#btime } 2>/dev/null || return 1
  local -a f=( ${=stat##*\) } )
  [[ $f[20] == <-> && $btime == <-> ]] || return 1
  integer age=$(( EPOCHSECONDS - btime - f[20] / 100 + 1 ))
  local -a socks=( $1/[0-9a-f](#c32).sock(N=ms-$age) )
  (( $#socks ))
} "${1-}" || return 0
typeset -g _tmux_run_remote=$1
source ${${(%):-%x}:A:h:h}/tmux-run.zsh
