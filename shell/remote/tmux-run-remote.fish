# tmux-run-remote.fish: the far end's start-up file for fish (docs/remote.md). The file
# `tmux-run setup --remote` writes, ~/.config/fish/conf.d/tmux-run-remote.fish, sources it with the
# forward directory:
#
#   test -r ~/.local/share/tmux-run/app/shell/remote/tmux-run-remote.fish; and source ... FORWARD-DIR
#
# It enrolls the shell only in a session started by `tmux-run ssh`: an interactive ssh login whose
# forward directory holds a socket made since its own sshd started. The helper then keeps only the
# socket its own sshd listens on (helper/remote/session-socket.ts); in any other login it ends
# silently. A plain ssh login finds no such socket: nothing starts, nothing is printed, no fork.
status is-interactive; or return 0
set -q SSH_CONNECTION[1]; or return 0
set -q _tmux_run_helper_pid[1]; and return 0

function _tmux_run_remote_session --argument-names dir --description 'tmux-run: is this a tmux-run ssh session'
    string match -q '/*' -- $dir; and test -d $dir; and not test -L $dir; and test -O $dir; or return 1
    set -l socks $dir/*.sock
    set -q socks[1]; or return 1
    # This session's sshd (the shell's parent) started at field 22 of its stat (USER_HZ, 100 on
    # Linux) after boot (btime): only a socket made since then, to the second, can be its own.
    read -l line </proc/$fish_pid/stat; or return 1
    set -l f (string split ' ' -- (string replace -r '^.*\) ' '' -- $line))
    read -l pline </proc/$f[2]/stat; or return 1
    set -l p (string split ' ' -- (string replace -r '^.*\) ' '' -- $pline))
    set -l btime (string match -r '^btime (\d+)' </proc/stat)[2]
    string match -qr '^\d+$' -- "$p[20]"; and string match -qr '^\d+$' -- "$btime"; or return 1
    set -l since (math "$btime + floor($p[20] / 100) - 1")
    # (fish before 3.5 has no `path`: the helper's own check decides.)
    builtin -q path; or return 0
    for s in (path filter -t socket -- $socks)
        test (path mtime -- $s) -ge $since; and return 0
    end
    return 1
end

if _tmux_run_remote_session "$argv[1]"
    functions -e _tmux_run_remote_session
    set -g _tmux_run_remote $argv[1]
    source (string replace -r '/remote/[^/]*$' '' -- (builtin realpath -- (status filename)))/tmux-run.fish
else
    functions -e _tmux_run_remote_session
end
