# tmux-run-remote.bash: the far end's start-up file for bash (docs/remote.md). The line
# `tmux-run setup --remote` adds to ~/.bashrc sources it with the forward directory:
#
#   [[ -r ~/.local/share/tmux-run/app/shell/remote/tmux-run-remote.bash ]] && source ... FORWARD-DIR
#
# (An ssh login bash reads ~/.bash_profile, ~/.bash_login or ~/.profile, the first there is; the
# stock ones of Debian, Ubuntu, Fedora and RHEL source ~/.bashrc, whose non-interactive return, if
# any, comes before the line.) It enrolls the shell only in a session started by `tmux-run ssh`:
# an interactive ssh login whose forward directory holds a socket made since its own sshd started.
# The helper then keeps only the socket its own sshd listens on (helper/remote/session-socket.ts);
# in any other login it ends silently. A plain ssh login finds no such socket: nothing starts,
# nothing is printed (no fork at all when the directory holds no socket; one `find` when it does,
# bash having no way of its own to read a file's time).
[[ $- == *i* && -n ${SSH_CONNECTION-} && -z ${_tmux_run_helper_pid-} ]] || return 0

# _tmux_run_remote_session DIR: true when DIR (a real directory of this user's) holds a socket made
# since this session's sshd (the shell's parent) started, to the second: its start (field 22 of
# /proc/PPID/stat, in USER_HZ, 100 on Linux) after boot (btime).
_tmux_run_remote_session() {
  local dir=$1 s line key value btime= found=
  [[ $dir == /* && -d $dir && ! -L $dir && -O $dir ]] || return 1
  for s in "$dir"/*.sock; do [[ -S $s ]] && { found=1; break; }; done
  [[ -n $found ]] || return 1
  { read -r line </proc/$PPID/stat; } 2>/dev/null || return 1
  line=${line##*) }
  local -a f=($line)
  while read -r key value; do [[ $key == btime ]] && { btime=$value; break; }; done 2>/dev/null </proc/stat
  [[ ${f[19]-} =~ ^[0-9]+$ && $btime =~ ^[0-9]+$ ]] || return 1
  # (A find without -newermt, busybox's: the helper's own check decides.)
  found=$(command find "$dir" -maxdepth 1 -type s -name '*.sock' -newermt "@$((btime + f[19] / 100 - 1))" -print -quit 2>/dev/null) ||
    return 0
  [[ -n $found ]]
}

if _tmux_run_remote_session "${1-}"; then
  unset -f _tmux_run_remote_session
  _tmux_run_remote=$1
  source "${BASH_SOURCE[0]%/*/*}/tmux-run.bash"
else
  unset -f _tmux_run_remote_session
fi
return 0
