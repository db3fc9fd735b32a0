# tmux-run.fish: enroll this fish pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.fish    # enroll (again: harmless)
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# fish 3.4 or newer, interactive, inside tmux. Sourcing defines only functions and globals whose
# names start with tmux_run_ or _tmux_run_.

# Refuse early in shells that are not fish: this line means the same in fish and in POSIX shells
# (which run a sourced file line by line, so they never reach the fish below it).
test -z "$FISH_VERSION" && echo "tmux-run: not enrolled: this shell is not fish; tmux-run.fish needs an interactive fish 3.4 or newer" >&2 && return 1 2>/dev/null || test -n "$FISH_VERSION" || exit 1

# _tmux_run_refusal: the reason this fish cannot enroll (printed), or nothing.
function _tmux_run_refusal --description 'tmux-run: why this fish cannot enroll, if it cannot'
    set -l v (string split . -- $version)
    if test "$v[1]" -lt 3; or begin; test "$v[1]" -eq 3; and test "$v[2]" -lt 4; end
        echo "fish $version is too old; fish 3.4 or newer is required"
    else if not status is-interactive
        echo "this fish is not interactive"
    else if not set -q TMUX[1]; or not set -q TMUX_PANE[1]; or test -z "$TMUX"; or test -z "$TMUX_PANE"
        echo "this shell is not running inside tmux (TMUX and TMUX_PANE are unset)"
    end
end

set -l _tmux_run_why (_tmux_run_refusal)
if test -n "$_tmux_run_why"
    echo "tmux-run: not enrolled: $_tmux_run_why" >&2
    functions -e _tmux_run_refusal
    return 1
end
functions -e _tmux_run_refusal
echo "tmux-run: not enrolled: fish panes are not supported by this build yet" >&2
return 1
