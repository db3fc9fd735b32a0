# tmux-run-remote.zsh: the far end's start-up file for zsh (docs/remote.md). The line
# `tmux-run setup --remote` adds to ~/.zshrc sources it with the forward directory:
#
#   source ~/.local/share/tmux-run/app/shell/remote/tmux-run-remote.zsh FORWARD-DIR
#
# It enrolls the shell only in a session started by `tmux-run ssh`: an interactive ssh login
# whose forward directory holds a session socket. The helper then keeps only the socket its own
# sshd listens on (helper/remote/session-socket.ts); in any other login it ends silently. A plain
# ssh login with no `tmux-run ssh` session open to this host finds no socket here: nothing
# starts, nothing is printed.
[[ -o interactive && -n ${SSH_CONNECTION-} && -z ${_tmux_run_helper_pid-} ]] || return 0
() {
  emulate -L zsh
  setopt local_options extended_glob
  [[ $1 == /* && -d $1 && ! -L $1 && -O $1 ]] || return 1
  local -a socks=( $1/[0-9a-f](#c32).sock(N=) )
  (( $#socks ))
} "${1-}" || return 0
typeset -g _tmux_run_remote=$1
source ${${(%):-%x}:A:h:h}/tmux-run.zsh
