# tmux-run.fish: enroll this fish pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.fish    # enroll (again: harmless)
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# fish 3.4 or newer, interactive, inside tmux. Nothing is ever typed into this terminal. A helper
# process answers the broker; it asks this shell whether it sits at its prompt through files and
# SIGURG, which a handler answers (docs/protocol-signal.md; fish panes: docs/shells.md). This file
# is only what a new pane needs on its way to its first prompt, as little as fish parses quickly
# and without a command substitution of a function (each costs fish a thread): the checks (the
# reasons are said by the rest), the helper's start at the first prompt and the handlers. The rest
# (shell/tmux-run-serve.fish: refusals, answering, notices, the end, sourcing again) is read once
# the helper first speaks or a case needs it (_tmux_run_serve).
#
# Sourcing defines only functions and globals whose names start with tmux_run_ or _tmux_run_;
# three of the functions are event handlers (fish_prompt, fish_preexec, SIGURG/SIGWINCH) that return at
# once when the shell is not enrolled (the person's own handlers of those events run as before).

# Refuse early in shells that are not fish: this line means the same in fish and in POSIX shells
# (which run a sourced file line by line, so they never reach the fish below it).
test -z "$FISH_VERSION" && echo "tmux-run: not enrolled: this shell is not fish; tmux-run.fish needs an interactive fish 3.4 or newer" >&2 && return 1 2>/dev/null || test -n "$FISH_VERSION" || exit 1

# A fish that is not interactive (a `fish -c` a tool runs reads config.fish too) has no prompt to
# serve: a bare `source` line there prints nothing and defines nothing.
status is-interactive; or return 0

set -g _tmux_run_snippet (builtin realpath -- (status filename))
# (Sourced again, perhaps after an upgrade: the rest is read again too.)
set -e _tmux_run_served

# _tmux_run_enroll: checks what fish can check without a fork (a refusal: why, from the rest;
# sourced again: the rest decides, _tmux_run_enroll_again), makes the channel's log (0600) and has
# the helper start at the first prompt (_tmux_run_on_prompt), then returns: the helper's first line
# (R when enrolled, E with the reason) arrives in its message file with a SIGURG, or is read at a
# prompt. The registry directory's mode the helper checks first thing (fish has no stat): a refusal
# is said at the prompt after. Returns 0 when the helper is to start (or the shell is enrolled
# already), 1 with one line on stderr otherwise; a refusal leaves nothing behind.
function _tmux_run_enroll --description 'tmux-run: enroll this pane'
    set -l why
    set -l dir $TMUX_RUN_DIR
    set -l node node
    set -q TMUX_RUN_NODE[1]; and test -n "$TMUX_RUN_NODE"; and set node $TMUX_RUN_NODE
    # (Named groups set the locals declared first, never a variable of the person's.)
    set -l root
    set -l uid
    string match -qr '^(?<root>.*)/shell/[^/]*$' -- $_tmux_run_snippet
    set -l main $root/dist/helper/main.js
    if string match -qr '^(?:[0-2]|3\.[0-3])(?:\.|$)' -- $version
        # (Said here: the rest of the snippet needs fish 3.4 to be read at all.)
        echo "tmux-run: not enrolled: fish $version is too old; fish 3.4 or newer is required" >&2
        return 1
    else if not set -q _tmux_run_remote[1]; and begin
            # (At the far end of a `tmux-run ssh` session, shell/remote/tmux-run-remote.fish, the pane is the local one.)
            test -z "$TMUX"; or test -z "$TMUX_PANE"
        end
        set why tmux
    else if set -q _tmux_run_helper_pid[1]; or set -q _tmux_run_held[1]
        _tmux_run_serve; or return 1
        _tmux_run_enroll_again
        test $status -eq 2; or return $status
    end
    if test -z "$why"
        if test -n "$dir"
        else if test -n "$XDG_RUNTIME_DIR"
            set dir $XDG_RUNTIME_DIR/tmux-run
        else
            string match -qr '^Uid:\s+\d+\s+(?<uid>\d+)' </proc/$fish_pid/status
            set dir /tmp/tmux-run-$uid
            test -d /run/user/$uid; and not test -L /run/user/$uid; and test -O /run/user/$uid; and set dir /run/user/$uid/tmux-run
        end
        if string match -q '/*' -- $dir; and not test -e $dir; and not test -L $dir
            set -l saved $umask
            set -g umask 0077
            command mkdir -m 700 -- $dir 2>/dev/null
            set -g umask $saved
        end
        if not string match -q '/*' -- $dir
            set why relative
        else if test -L $dir
            set why symlink
        else if not test -d $dir
            set why file
        else if not test -O $dir
            set why owner
        else if not test -r $main
            set why main
        else if not command -q $node
            set why node
        end
    end
    if test -n "$why"
        _tmux_run_serve; and _tmux_run_refuse $why $dir $node
        return 1
    end
    # What an earlier enrollment of this pid left: the log of a helper that failed, or the channel
    # of a fish this one replaced with `exec fish` (its helper, still our child, is stopped).
    set -l old $dir/ch.$fish_pid.*
    if set -q old[1]
        _tmux_run_serve; and _tmux_run_stop_replaced $dir $old
        command rm -f -- $old 2>/dev/null
    end
    set -l base $dir/ch.$fish_pid.(random 100000000000 999999999999)
    set -l saved $umask
    set -g umask 0077
    if not printf '' >$base.log 2>/dev/null
        set -g umask $saved
        _tmux_run_serve; and _tmux_run_refuse channel $dir $node
        return 1
    end
    set -g umask $saved
    # The helper starts at the first prompt (_tmux_run_on_prompt), not while the config runs.
    set -g _tmux_run_held $main
    set -g _tmux_run_base $base
    set -g _tmux_run_node $node
    set -g _tmux_run_idle 1
    set -g _tmux_run_status 0
    set -g _tmux_run_pipestatus 0
    set -e _tmux_run_generation _tmux_run_enrollment _tmux_run_answered _tmux_run_seq _tmux_run_mode_sent
    return 0
end

# _tmux_run_launch BASE MAIN NODE [WAKE] [wait]: starts the helper in the background (its own process
# group, stdin /dev/null, no other descriptor of this shell's, umask 077), forgets the job, sets
# _tmux_run_helper_pid and _tmux_run_since (seconds since boot). It starts as /bin/sh, which sets
# the helper's environment (none of the person's NODE_OPTIONS, the memory settings of
# shell/tmux-run.zsh, the person's TMUX_RUN_IDLE passed on, exported or not; with WAKE,
# TMUX_RUN_WAKE=WAKE: a dormant enrollment started again, helper/wake.ts; at the far end of a
# `tmux-run ssh` session, TMUX_RUN_REMOTE), so that fish exports
# nothing anew for it, and becomes node. With wait (the first prompt, which fish has not drawn
# yet), it first waits until fish's reader waits for a key with none typed ahead (fish asleep in
# poll or select, as /proc/PID/wchan shows; at most about a second), as zsh's helper starts when
# its line editor first waits: a command typed at once runs first.
function _tmux_run_launch --argument-names base main node wake wait --description 'tmux-run: launch the helper'
    set -l saved $umask
    set -g umask 0077
    set -l idle
    set -q TMUX_RUN_IDLE; and set idle "1$TMUX_RUN_IDLE"
    command /bin/sh -c 'if [ -n "$1" ]; then i=0; while [ $i -lt 50 ]; do w=; read -r w </proc/$4/wchan; case $w in *select* | *poll*) break ;; esac; sleep 0.02; i=$((i + 1)); done 2>/dev/null; fi
export NODE_OPTIONS= MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768
[ -n "$2" ] && export TMUX_RUN_IDLE="${2#1}"
[ -n "$3" ] && export TMUX_RUN_WAKE="$3"
[ -n "$5" ] && export TMUX_RUN_REMOTE="$5"
shift 5; exec "$@"' sh "$wait" "$idle" "$wake" $fish_pid "$_tmux_run_remote" \
        $node --max-semi-space-size=1 --max-old-space-size=32 --no-opt --optimize-for-size --expose-gc \
        -- $main $base $fish_pid fish </dev/null >>$base.log 2>&1 &
    set -l hpid $last_pid
    set -g umask $saved
    disown $hpid 2>/dev/null
    set -g _tmux_run_helper_pid $hpid
    read -l -d . up rest </proc/uptime; or set up 0
    set -g _tmux_run_since $up
end

# _tmux_run_on_prompt: the fish_prompt event (before the prompt is drawn): the shell is idle
# again, $status kept for the prompt the answer reports. The first prompt after sourcing starts the
# helper (_tmux_run_launch, which waits for fish's reader); every later one is the rest's
# (_tmux_run_on_prompt_served: a helper that is gone is said there).
function _tmux_run_on_prompt --on-event fish_prompt --description 'tmux-run: at each prompt'
    set -l last $status $pipestatus
    if set -q _tmux_run_held[1]
        set -g _tmux_run_status $last[1]
        set -g _tmux_run_pipestatus $last[2..-1]
        set -g _tmux_run_idle 1
        _tmux_run_launch $_tmux_run_base $_tmux_run_held $_tmux_run_node '' wait
        set -e _tmux_run_held
        return 0
    end
    set -q _tmux_run_helper_pid[1]; or return 0
    _tmux_run_serve; and _tmux_run_on_prompt_served $last
end

function _tmux_run_on_preexec --on-event fish_preexec --description 'tmux-run: a command line starts'
    set -e _tmux_run_idle _tmux_run_noticed
end

# _tmux_run_on_winch: the handler of the helper's wake (SIGURG; SIGWINCH too: a dormant pane's wake)
# until the rest is read: nothing to do before the helper's message file exists; then the rest is
# read, whose _tmux_run_on_winch (the same events) replaces this one and answers.
function _tmux_run_on_winch --on-signal SIGURG --on-signal SIGWINCH --description 'tmux-run: answer the helper'
    set -q _tmux_run_base[1]; and test -f $_tmux_run_base.msg; or return 0
    _tmux_run_serve; and _tmux_run_on_winch $argv
end

# _tmux_run_serve: reads the rest (shell/tmux-run-serve.fish), once. Returns 1, saying so, when it
# cannot be read.
function _tmux_run_serve --description 'tmux-run: read the rest of the snippet'
    set -q _tmux_run_served[1]; and return 0
    set -l f (string replace -r '[^/]*$' '' -- $_tmux_run_snippet)tmux-run-serve.fish
    if not test -r $f; or not source $f
        echo "tmux-run: $f cannot be read; this pane cannot be served (reinstall tmux-run)" >&2
        return 1
    end
    set -g _tmux_run_served 1
end

# tmux_run_unenroll: ends this pane's enrollment (the rest has it).
function tmux_run_unenroll --description 'tmux-run: end this pane enrollment'
    _tmux_run_serve; and tmux_run_unenroll $argv
end

_tmux_run_enroll
