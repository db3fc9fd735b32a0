# tmux-run-start.bash: the helper's start, read by the child that shell/tmux-run.bash forks to
# become the helper (_tmux_run_launch), so that the shell itself neither parses nor runs it on its
# way to the first prompt; and the builtin's plan, which the rest of the snippet
# (shell/tmux-run-serve.bash) reads it for. Not for sourcing by hand: source shell/tmux-run.bash.
# Alias expansion is turned off here and not put back: the child never reads the person's
# commands, and tmux-run-serve.bash, which also reads this file, puts it back itself.
shopt -u expand_aliases

# _tmux_run_child BASE NODE MAIN [WAKE] [defer]: in the child (_tmux_run_launch, which has waited
# for the first prompt with defer), becomes the helper: umask 077, no descriptor but /dev/null and
# its log (0600), the memory settings of shell/tmux-run.zsh (see there; the person's NODE_OPTIONS
# are not for it), the person's TMUX_RUN_IDLE passed on (exported or not), and with WAKE,
# TMUX_RUN_WAKE=WAKE (a dormant enrollment started again: helper/wake.ts). Scripts never see these
# variables: they run with the shell's own environment, sent at dispatch. With defer (a new
# enrollment), first writes the line check the helper is to rely on in BASE.check
# (_tmux_run_exact_plan).
_tmux_run_child() {
  local base=$1 node=$2 main=$3 wake=${4-} defer=${5-} fd
  umask 077
  for fd in /proc/self/fd/*; do
    fd=${fd##*/}
    ((fd > 2)) && eval "exec $fd>&-"
  done 2>/dev/null
  if [[ -n $defer ]]; then
    _tmux_run_exact_plan
    _tmux_run_write_check "$base"
  fi
  export NODE_OPTIONS= MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768
  [[ -n ${TMUX_RUN_IDLE+x} ]] && export TMUX_RUN_IDLE
  [[ -n $wake ]] && export TMUX_RUN_WAKE=$wake
  [[ -n ${_tmux_run_remote-} ]] && export TMUX_RUN_REMOTE=$_tmux_run_remote
  exec "$node" --max-semi-space-size=1 --max-old-space-size=32 --no-opt --optimize-for-size --expose-gc -- \
    "$main" "$base" "$$" bash </dev/null >>"$base.log" 2>&1
}

# _tmux_run_write_check BASE: tells the helper which check to rely on (BASE.check, bash.ts): exact,
# load SO (the builtin, once the helper has checked it), or screen REASON.
_tmux_run_write_check() {
  if [[ -n $_tmux_run_exact ]]; then
    printf 'exact\n' 2>/dev/null >|"$1.check"
  elif [[ -n $_tmux_run_exact_so ]]; then
    printf 'load %s\n' "$_tmux_run_exact_so" 2>/dev/null >|"$1.check"
  else
    printf 'screen %s\n' "${_tmux_run_exact_why//[[:cntrl:]]/ }" 2>/dev/null >|"$1.check"
  fi
}

# _tmux_run_exact_plan: which line check to ask the helper for, without a fork: sets
# _tmux_run_exact to 1 when this build's builtin _tmux_run_line is loaded already (sourced again),
# else _tmux_run_exact_so to this install's dist/generated/bash-line.so (helper/shell/bash/bash-line.c)
# when it is there and no symlink, for the helper to check (its owner, its mode and its
# directory's, its build: src/core/enrollment/bash-builtin.ts) before the shell loads it; else leaves
# both empty with the reason in _tmux_run_exact_why (the screen check then).
_tmux_run_exact_plan() {
  _tmux_run_exact= _tmux_run_exact_so= _tmux_run_exact_why= _tmux_run_exact_id=
  local so=$_tmux_run_root/dist/generated/bash-line.so ids=$_tmux_run_root/dist/generated/build-id.cjs
  local f
  if [[ ${TMUX_RUN_NATIVE-} == off ]]; then
    _tmux_run_exact_why="TMUX_RUN_NATIVE=off in this shell"
    return 0
  fi
  if [[ ! -e $so ]]; then
    _tmux_run_exact_why="the builtin $so was not built (no C compiler, or TMUX_RUN_NATIVE=off, when tmux-run was built)"
    return 0
  fi
  for f in "$so" "${so%/*}"; do
    if [[ -L $f ]]; then
      _tmux_run_exact_why="$f is a symlink; the builtin is loaded only from the install's own files"
      return 0
    fi
  done
  _tmux_run_build_id
  if [[ -z $_tmux_run_exact_id ]]; then
    _tmux_run_exact_why="this install's build id ($ids) cannot be read; run 'npm run build' in $_tmux_run_root"
    return 0
  fi
  # Loaded already (sourced again): kept if it is this build's, else unloaded (and checked anew).
  if compgen -A enabled -X '!_tmux_run_line' -- _tmux_run_line >/dev/null 2>&1; then
    if _tmux_run_line build "$_tmux_run_exact_id"; then
      _tmux_run_exact=1
      return 0
    fi
    enable -d _tmux_run_line 2>/dev/null
  fi
  _tmux_run_exact_so=$so
  return 0
}

# _tmux_run_build_id: sets _tmux_run_exact_id to this install's build id (empty when it cannot be read).
_tmux_run_build_id() {
  local ids=$_tmux_run_root/dist/generated/build-id.cjs text=
  _tmux_run_exact_id=
  [[ -r $ids ]] && read -r -d '' text 2>/dev/null <"$ids"
  [[ $text =~ BUILD_ID\ =\ \"([0-9a-f]+)\" ]] && _tmux_run_exact_id=${BASH_REMATCH[1]}
  return 0
}
