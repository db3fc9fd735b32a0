# tmux-run.bash: enroll this bash pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.bash    # enroll (again: harmless); in ~/.bashrc
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# Nothing is ever typed into this terminal. A small helper process answers the broker; to ask
# this shell whether it is idle at its prompt, it leaves a request in a file and sends the shell
# SIGWINCH; a WINCH trap (chained with yours, which keeps firing) answers in another file
# (the protocol: helper/shell/signal/signal.ts). bash's own language cannot see the line being edited:
# the trap asks the loadable builtin _tmux_run_line (helper/shell/bash/bash-line.c, built with the
# helper into dist/generated/bash-line.so), which reads readline's state exactly (editor_check
# exact), draws notices and asks in ask mode with readline's own redisplay. The builtin is loaded
# only from this install, only when the file and its directory are yours or root's and writable by
# nobody else (checked by the helper: bash cannot read a file's mode without a fork), and only when
# it is of this install's build; without it (not built, a restricted
# bash, bad permissions, another build, TMUX_RUN_NATIVE=off) the helper reads the pane's screen,
# read-only, to check that the line is empty (editor_check screen, the reason in the listings and
# doctor), no notice is drawn, and ask mode refuses every run (approval_unavailable).
#
# Only what enrollment and a prompt need is here, so that bash parses little on its way to the
# first prompt; the rest (answering the helper, asking, notices, the end of an enrollment) is in
# shell/tmux-run-serve.bash, read once when the helper first has something to say (_tmux_run_serve).
#
# ble.sh replaces readline: a bash with ble.sh loaded is not enrolled (said when sourcing and, as
# ble.sh hides what .bashrc writes to stderr once attached, at the first prompt; and by doctor).
#
# Sourcing defines only names that start with tmux_run_ or _tmux_run_ (the builtin too), adds one hook to
# PROMPT_COMMAND and a zero-output expansion to PS0 and PS2 while enrolled, wraps the WINCH and
# DEBUG traps (yours still run), and changes none of the shell's options.

# Refuse early in shells that are not bash; this part must parse in any POSIX shell.
if [ -z "${BASH_VERSION-}" ]; then
  echo "tmux-run: not enrolled: this shell is not bash; tmux-run.bash needs an interactive bash 4.4 or newer" >&2
  return 1 2>/dev/null || exit 1
fi

# The person's aliases must not change the functions below: define them with alias expansion
# off, then put the option back exactly as it was.
if shopt -q expand_aliases; then _tmux_run_aliases=on; else _tmux_run_aliases=; fi
shopt -u expand_aliases

_tmux_run_snippet=${BASH_SOURCE[0]}
[[ $_tmux_run_snippet == /* ]] || _tmux_run_snippet=$PWD/$_tmux_run_snippet
_tmux_run_snippet=${_tmux_run_snippet//\/.\//\/}
# The package's root: the snippet is its shell/tmux-run.bash.
_tmux_run_root=${_tmux_run_snippet%/*/*}
# (Sourced again, perhaps after an upgrade: the rest is read again too.)
_tmux_run_served=

# _tmux_run_refuse TEXT: says why the pane is not enrolled, and fails.
_tmux_run_refuse() {
  printf '%s\n' "tmux-run: not enrolled: $1" >&2
  return 1
}

# _tmux_run_ble_refuse: ble.sh replaces readline, so this bash is not enrolled. Said on stderr,
# which ble.sh, once attached, sends to a file of its own for the rest of .bashrc: then said again
# at the first prompt, once ble.sh has drawn it (_tmux_run_ble_tell, ble.sh's idle task). And said
# to `tmux-run doctor` run in this pane (src/cli/doctor-pane.ts): TMUX_RUN_REFUSED, exported,
# names the pane, this shell and why.
_tmux_run_ble_refuse() {
  _tmux_run_ble_why="ble.sh ${BLE_VERSION} is loaded in this bash: it replaces readline, whose line tmux-run reads to know that the line is empty; to enroll this pane, start a bash without ble.sh in it (a .bashrc that does not source ble.sh) and source $_tmux_run_snippet there"
  _tmux_run_refuse "$_tmux_run_ble_why"
  export TMUX_RUN_REFUSED="$TMUX_PANE $$ $_tmux_run_ble_why"
  if [[ ! -t 2 && -n ${BLE_ATTACHED-} ]] && declare -F ble/util/idle.push >/dev/null; then
    ble/util/idle.push _tmux_run_ble_tell
  fi
  return 0
}

# _tmux_run_ble_tell: ble.sh's idle task, at the first prompt: says why the pane is not enrolled on
# a line of its own above the prompt, which ble.sh then draws again (or, with a ble.sh that lacks
# those functions, in its info area below the line).
_tmux_run_ble_tell() {
  local text="tmux-run: not enrolled: $_tmux_run_ble_why"
  if declare -F ble/widget/.hide-current-line ble/textarea#redraw >/dev/null; then
    ble/widget/.hide-current-line
    printf '\r\e[K%s\n' "$text" >&2
    ble/textarea#redraw
  elif declare -F ble/edit/info/immediate-show >/dev/null; then
    ble/edit/info/immediate-show text "$text"
  fi
  return 0
}

# _tmux_run_enroll: checks what the shell can check without a fork, starts the helper and returns
# without waiting for it: the helper's first word (R when enrolled, E with the reason when not)
# arrives through the WINCH trap or is read at the next prompt (_tmux_run_prompt). Until then the
# pane is not listed. What needs a file's mode (the registry directory's, the builtin's) the helper
# checks: a refusal is said at the prompt after it. The helper waits for the first prompt to start
# (_tmux_run_launch, deferred), so that Node's start does not compete with the rest of .bashrc nor
# with the prompt. Returns 0 when the helper was started (or the shell is enrolled already), 1
# with one line on stderr otherwise; a refusal leaves nothing behind.
_tmux_run_enroll() {
  if (( BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4) )); then
    _tmux_run_refuse "bash $BASH_VERSION is too old; bash 4.4 or newer is required"
    return 1
  fi
  if [[ -n ${BASH_EXECUTION_STRING+x} ]]; then
    _tmux_run_refuse "this bash runs a command string (bash -c) and never waits at a prompt"
    return 1
  fi
  if [[ $- != *i* ]]; then
    _tmux_run_refuse "this bash is not interactive"
    return 1
  fi
  # At the far end of a `tmux-run ssh` session (shell/remote/tmux-run-remote.bash), the pane is the local one.
  if [[ -z ${_tmux_run_remote-} ]] && [[ -z ${TMUX-} || -z ${TMUX_PANE-} ]]; then
    _tmux_run_refuse "this shell is not running inside tmux (TMUX and TMUX_PANE are unset)"
    return 1
  fi
  if shopt -q restricted_shell; then
    _tmux_run_refuse "this bash is restricted (rbash): once started it cannot write the files tmux-run answers through"
    return 1
  fi
  if [[ -n ${BLE_VERSION-} ]]; then
    _tmux_run_ble_refuse
    return 1
  fi
  # (Enrolled after all, in a bash started from a refused one: doctor is not to say otherwise.)
  [[ -n ${TMUX_RUN_REFUSED-} ]] && unset TMUX_RUN_REFUSED
  if [[ -n ${_tmux_run_dormant-}${_tmux_run_waking-} ]]; then
    local REPLY
    _tmux_run_pane_name
    printf '%s\n' "tmux-run: $REPLY is already enrolled (generation $_tmux_run_generation; its helper is dormant until a run needs it)" >&2
    return 0
  fi
  if [[ -n ${_tmux_run_helper_pid-} ]] && kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
    # Still starting (sourced twice in start-up files, say): that start goes on, silently.
    local REPLY
    _tmux_run_pane_name
    [[ -n ${_tmux_run_generation-} ]] &&
      printf '%s\n' "tmux-run: $REPLY is already enrolled (generation $_tmux_run_generation)" >&2
    return 0
  fi
  # Its helper died unnoticed (no prompt since): say so first, as a prompt would have.
  [[ -n ${_tmux_run_helper_pid-} ]] && _tmux_run_prompt

  local dir node main base
  _tmux_run_dir
  dir=$REPLY
  _tmux_run_check_dir "$dir" || return 1
  main=$_tmux_run_root/dist/helper/main.js
  if [[ ! -r $main ]]; then
    _tmux_run_refuse "the helper $main is missing; run 'npm install' in $_tmux_run_root"
    return 1
  fi
  node=${TMUX_RUN_NODE:-node}
  if ! type -P -- "$node" >/dev/null && [[ $node != */* || ! -f $node || ! -x $node ]]; then
    if [[ -n ${TMUX_RUN_NODE-} ]]; then
      _tmux_run_refuse "TMUX_RUN_NODE=$node is not a program that can be run (set it to node's absolute path, or unset it to use node on PATH)"
    else
      _tmux_run_refuse "node was not found on PATH (set TMUX_RUN_NODE to its path)"
    fi
    return 1
  fi

  base=$dir/ch.$$.$RANDOM$RANDOM
  if ! _tmux_run_create "$base"; then
    _tmux_run_remove "$base.trap" "$base.mode" "$base.check"
    _tmux_run_refuse "cannot create the shell channel in $dir"
    return 1
  fi
  # The line check the helper is to rely on: exact with the builtin (loaded already, or to be
  # loaded once the helper has checked the file), else the screen and why.
  _tmux_run_exact_plan
  _tmux_run_write_check "$base"

  # The helper starts in the background, without a job number (disowned) and with no descriptor
  # but /dev/null and its log (0600): none of the shell's. The person's NODE_OPTIONS are not for
  # it; the memory settings are those of shell/tmux-run.zsh (see there). Scripts never see these
  # variables: they run with the shell's own environment, sent at dispatch.
  _tmux_run_launch "$base" "$node" "$main" '' defer
  _tmux_run_base=$base _tmux_run_node=$node _tmux_run_generation= _tmux_run_enrollment=
  _tmux_run_answered= _tmux_run_mode_sent= _tmux_run_said= _tmux_run_idle=0 _tmux_run_z=x
  _tmux_run_asking= _tmux_run_noticed=0 _tmux_run_prompts=0 _tmux_run_told= _tmux_run_telling=
  declare -gA _tmux_run_always=()
  printf -v _tmux_run_since '%(%s)T' -1
  _tmux_run_ps0='${_tmux_run_z:$((_tmux_run_idle=0,0)):0}'
  _tmux_run_ps2='${_tmux_run_z:$((_tmux_run_idle=2,0)):0}'
  _tmux_run_hook_prompt add
  _tmux_run_hooks
  return 0
}

# _tmux_run_launch BASE NODE MAIN [WAKE] [defer]: starts the helper in the background, disowned,
# with no descriptor but /dev/null and its log (0600), the memory settings above, the person's
# TMUX_RUN_IDLE passed on (exported or not), and with WAKE, TMUX_RUN_WAKE=WAKE (a dormant
# enrollment started again: helper/wake.ts); sets _tmux_run_helper_pid. With defer, the child
# becomes node only after the shell's first prompt (BASE.mode written by _tmux_run_report_mode), or
# after 3 seconds if no prompt says so (PROMPT_COMMAND replaced later in .bashrc: the helper's first
# word puts the hook back); then once readline waits for a key with none typed ahead (the shell
# asleep in select or poll, as /proc/PID/wchan shows; at most 2 seconds), as zsh's helper starts
# when its line editor first waits: a command typed at once runs first. The child looks every 10 ms,
# waiting in a read with a timeout from a descriptor that never has data: a new pseudo-terminal's
# master (/dev/ptmx, no process), else the pipe of a `sleep` (one fork, in the child).
_tmux_run_launch() {
  local base=$1 node=$2 main=$3 wake=${4-} defer=${5-}
  {
    (
      umask 077
      for _tmux_run_fd in /proc/self/fd/*; do
        _tmux_run_fd=${_tmux_run_fd##*/}
        ((_tmux_run_fd > 2)) && eval "exec $_tmux_run_fd>&-"
      done 2>/dev/null
      if [[ -n $defer ]]; then
        _tmux_run_sleep=
        if ! exec {_tmux_run_pipe}<>/dev/ptmx; then
          exec {_tmux_run_pipe}< <(exec sleep 6 </dev/null 2>/dev/null)
          _tmux_run_sleep=$!
          trap 'kill $_tmux_run_sleep 2>/dev/null; exit 143' TERM HUP
        fi
        for ((_tmux_run_fd = 0; _tmux_run_fd < 300; _tmux_run_fd++)); do
          [[ -s $base.mode ]] && break
          kill -0 $$ || exit 0
          read -r -t 0.01 -u "$_tmux_run_pipe" _tmux_run_w
        done
        for ((_tmux_run_fd = 0; _tmux_run_fd < 200; _tmux_run_fd++)); do
          read -r _tmux_run_w </proc/$$/wchan
          [[ $_tmux_run_w == *select* || $_tmux_run_w == *poll* ]] && break
          read -r -t 0.01 -u "$_tmux_run_pipe" _tmux_run_w
        done
        [[ -n $_tmux_run_sleep ]] && kill "$_tmux_run_sleep"
        exec {_tmux_run_pipe}<&-
        trap - TERM HUP
        # (The shell gone meanwhile: nothing to start.)
        kill -0 $$ || exit 0
      fi
      export NODE_OPTIONS= MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768
      [[ -n ${TMUX_RUN_IDLE+x} ]] && export TMUX_RUN_IDLE
      [[ -n $wake ]] && export TMUX_RUN_WAKE=$wake
      [[ -n ${_tmux_run_remote-} ]] && export TMUX_RUN_REMOTE=$_tmux_run_remote
      exec "$node" --max-semi-space-size=1 --max-old-space-size=32 --no-opt --optimize-for-size --expose-gc -- \
        "$main" "$base" "$$" bash </dev/null >>"$base.log" 2>&1
    ) &
  } 2>/dev/null
  _tmux_run_helper_pid=$!
  disown "$_tmux_run_helper_pid" 2>/dev/null
  return 0
}

# _tmux_run_create BASE: makes the files the shell writes again and again, once, 0600 (a write
# keeps their mode), each new (noclobber: O_EXCL, so nothing planted there is followed).
_tmux_run_create() {
  local - um REPLY ok=0
  set -C
  _tmux_run_umask
  um=$REPLY
  umask 077
  { : >"$1.trap" && : >"$1.mode" && : >"$1.check"; } 2>/dev/null || ok=1
  umask "$um"
  return $ok
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

# _tmux_run_pane_name: sets REPLY to how messages name this pane: its tmux id, or at the far end
# of a `tmux-run ssh` session (no tmux of the pane's here) the session's pane.
_tmux_run_pane_name() {
  if [[ -n ${_tmux_run_remote-} ]]; then REPLY="the pane of this ssh session"; else REPLY="pane $TMUX_PANE"; fi
}

# _tmux_run_dir: sets REPLY to the registry directory (as src/core/enrollment/layout.ts decides).
_tmux_run_dir() {
  if [[ -n ${TMUX_RUN_DIR-} ]]; then REPLY=$TMUX_RUN_DIR
  elif [[ -n ${XDG_RUNTIME_DIR-} ]]; then REPLY=$XDG_RUNTIME_DIR/tmux-run
  elif [[ -d /run/user/$EUID && ! -L /run/user/$EUID && -O /run/user/$EUID ]]; then REPLY=/run/user/$EUID/tmux-run
  else REPLY=/tmp/tmux-run-$EUID
  fi
}

# _tmux_run_check_dir DIR: makes DIR (mode 700) when it is missing; fails, saying why, unless it
# is a real directory of this user's. That no one else can use it (mode 700, as tmux checks its
# socket directory) the helper checks first thing (src/core/enrollment/layout.ts, checkRegistryDir): a
# refusal is said at the prompt after; meanwhile the shell only made its files there anew (O_EXCL).
_tmux_run_check_dir() {
  local dir=$1
  if [[ $dir != /* ]]; then
    _tmux_run_refuse "the directory $dir is not an absolute path; set TMUX_RUN_DIR to one"
    return 1
  fi
  [[ -e $dir || -L $dir ]] || command mkdir -m 700 -- "$dir" 2>/dev/null
  if [[ -L $dir ]]; then
    _tmux_run_refuse "$dir is a symlink; refusing to use it (remove it or set TMUX_RUN_DIR)"
    return 1
  fi
  if [[ ! -e $dir ]]; then
    _tmux_run_refuse "cannot create the directory $dir"
    return 1
  fi
  if [[ ! -d $dir ]]; then
    _tmux_run_refuse "$dir is not a directory (remove it or set TMUX_RUN_DIR)"
    return 1
  fi
  if [[ ! -O $dir ]]; then
    _tmux_run_refuse "$dir belongs to another user, not to you (uid $EUID); remove it or set TMUX_RUN_DIR"
    return 1
  fi
  return 0
}

# _tmux_run_umask: sets REPLY to the shell's umask, read from /proc without a fork.
_tmux_run_umask() {
  local key value
  REPLY=022
  # (Linux 4.7 and later: the second line.)
  { read -r key && read -r key value; } 2>/dev/null </proc/$$/status
  [[ $key == Umask: ]] && { REPLY=$value; return 0; }
  while read -r key value; do
    [[ $key == Umask: ]] && { REPLY=$value; return 0; }
  done 2>/dev/null </proc/$$/status
  return 0
}

# _tmux_run_remove FILE...: removes the files that exist (bash has no builtin for it: a fork,
# only when there is something to remove).
_tmux_run_remove() {
  local f
  local -a there=()
  for f in "$@"; do [[ -e $f || -L $f ]] && there+=("$f"); done
  ((${#there[@]} == 0)) || command rm -f -- "${there[@]}" 2>/dev/null
  return 0
}

# _tmux_run_hook_prompt add|remove: puts _tmux_run_prompt last in PROMPT_COMMAND (a string, or an
# array in bash 5.1 and later), or takes it out. Last but before bash-preexec's own last entries
# (its install string, `__bp_install "$_"` after 0.6.0, then __bp_interactive_mode): it arms its
# preexec there, and any entry run after it would be taken for the person's first command.
#
# With bash-preexec loaded (it runs precmd_functions first in PROMPT_COMMAND, and at the prompt
# where it installs its DEBUG trap, before it arms its preexec), the hook goes last in
# precmd_functions instead: it then wraps that trap at that very prompt, before a WINCH trap can
# fire it, and bash-preexec never takes the hook's own PROMPT_COMMAND entry for a command.
_tmux_run_hook_prompt() {
  local i at=
  if [[ -n ${precmd_functions+x} || $1 == remove ]]; then
    local -a fns=()
    for i in "${precmd_functions[@]}"; do [[ $i == _tmux_run_prompt ]] || fns+=("$i"); done
    [[ -n ${precmd_functions+x} ]] && precmd_functions=("${fns[@]}")
  fi
  if [[ $1 == add ]] && declare -F __bp_precmd_invoke_cmd >/dev/null; then
    precmd_functions+=(_tmux_run_prompt)
    # (Traced, so that the hook it calls sees the DEBUG trap: bash shows a function the trap only
    # when every caller up to the top has the trace attribute. bash-preexec after 0.6.0 calls the
    # precmd_functions from __bp_invoke_precmd_functions, itself called by __bp_precmd_invoke_cmd.)
    declare -ft __bp_precmd_invoke_cmd
    declare -F __bp_invoke_precmd_functions >/dev/null && declare -ft __bp_invoke_precmd_functions
    set -- remove
  fi
  if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    local -a pcs=()
    for i in "${!PROMPT_COMMAND[@]}"; do
      [[ ${PROMPT_COMMAND[i]} == _tmux_run_prompt ]] || pcs+=("${PROMPT_COMMAND[i]}")
    done
    if [[ $1 == add ]]; then
      at=${#pcs[@]}
      for i in "${!pcs[@]}"; do
        [[ ${pcs[i]} == __bp_trap_string=* || ${pcs[i]} == '__bp_install "$_"' || ${pcs[i]} == __bp_interactive_mode ]] && { at=$i; break; }
      done
      pcs=("${pcs[@]:0:at}" _tmux_run_prompt "${pcs[@]:at}")
    fi
    PROMPT_COMMAND=("${pcs[@]}")
    return 0
  fi
  local pc=${PROMPT_COMMAND-} head tail
  pc=${pc//$'\n'_tmux_run_prompt/}
  pc=${pc//_tmux_run_prompt/}
  if [[ $1 == add ]]; then
    for at in '__bp_trap_string=' '__bp_install "$_"' '__bp_interactive_mode'; do
      if [[ $'\n'$pc == *$'\n'"$at"* ]]; then
        head=$'\n'$pc
        head=${head%%$'\n'"$at"*}
        head=${head#$'\n'}
        tail=${pc:${#head}}
        tail=${tail#$'\n'}
        pc=${head:+$head$'\n'}_tmux_run_prompt$'\n'$tail
        break
      fi
      at=
    done
    [[ -n $at ]] || pc=${pc:+$pc$'\n'}_tmux_run_prompt
  fi
  PROMPT_COMMAND=$pc
  [[ -n $PROMPT_COMMAND ]] || unset PROMPT_COMMAND
  return 0
}

# _tmux_run_has_hook: true while _tmux_run_prompt is in PROMPT_COMMAND (or precmd_functions).
_tmux_run_has_hook() {
  local e
  for e in "${PROMPT_COMMAND[@]}" "${precmd_functions[@]}"; do [[ $e == *_tmux_run_prompt* ]] && return 0; done
  return 1
}

# _tmux_run_trap_of SIGNAL: sets REPLY to the action of the shell's trap for SIGNAL ('' if none),
# read back from `trap -p` through the channel's own 0600 file, without a fork.
_tmux_run_trap_of() {
  local text=
  REPLY=
  trap -p "$1" 2>/dev/null >|"$_tmux_run_base.trap" || return 0
  read -r -d '' text 2>/dev/null <"$_tmux_run_base.trap"
  [[ $text == "trap -- "* ]] || return 0
  eval "_tmux_run_grab ${text#trap }"
}
_tmux_run_grab() { REPLY=${2-}; }

# The prefix of the WINCH trap while enrolled; the person's action follows it on the next line.
# (No reserved word in it: bash 5.2 fails to parse `{ ...; }` in a trap that runs while readline
# reads a continuation line.)
_tmux_run_winch_prefix=_tmux_run_on_winch
# The DEBUG trap while enrolled: the person's action, skipped while the shell is idle at its prompt
# (a trap's first command fires DEBUG too: a bash-preexec must not see the handler as the person's)
# and inside the snippet's own functions.
_tmux_run_debug_head='case ${_tmux_run_idle-}:${FUNCNAME-} in 1:* | *:_tmux_run_*) ;; *) '
_tmux_run_debug_tail=$'\n;; esac # tmux-run'

# _tmux_run_hooks: at each prompt, makes sure the hooks are in place, in case the person or a
# framework replaced them: the WINCH trap (theirs chained after it), the DEBUG guard, the PS0 and
# PS2 expansions. Cheap: two `trap -p` read back from a file. With `debug`, also the DEBUG trap
# _tmux_run_prompt left in the file.
_tmux_run_hooks() {
  local REPLY text=
  if [[ ${1-} == debug ]]; then
    # The DEBUG trap as _tmux_run_prompt read it (a function sees it only with the trace attribute).
    read -r -d '' text 2>/dev/null <"$_tmux_run_base.trap"
    REPLY=
    [[ $text == "trap -- "* ]] && eval "_tmux_run_grab ${text#trap }"
    if [[ -n $REPLY && $REPLY != "$_tmux_run_debug_head"* ]]; then
      _tmux_run_debug_user=$REPLY
      trap -- "$_tmux_run_debug_head$REPLY$_tmux_run_debug_tail" DEBUG
    fi
  fi
  _tmux_run_trap_of WINCH
  if [[ $REPLY != "$_tmux_run_winch_prefix"* ]]; then
    trap -- "$_tmux_run_winch_prefix${REPLY:+$'\n'$REPLY}" WINCH
  fi
  # bash-preexec loaded after the snippet: the hook moves into its precmd_functions (see
  # _tmux_run_hook_prompt), at the very prompt where bash-preexec installs itself.
  if declare -F __bp_precmd_invoke_cmd >/dev/null && [[ " ${precmd_functions[*]-} " != *" _tmux_run_prompt "* ]]; then
    _tmux_run_hook_prompt add
  fi
  [[ ${PS0-} == *"$_tmux_run_ps0"* ]] || PS0=$_tmux_run_ps0${PS0-}
  [[ ${PS2-} == *"$_tmux_run_ps2"* ]] || PS2=$_tmux_run_ps2${PS2-}
  return 0
}

# _tmux_run_prompt: the PROMPT_COMMAND hook, last in it. Says what is to be said (a failed start,
# a revocation, a lost helper), notices a helper that is gone, keeps the hooks in place, reports
# the mode, and marks the shell idle at its primary prompt. Keeps $? for the prompt.
_tmux_run_prompt() {
  local rc=$?
  [[ -n ${_tmux_run_base-} ]] && trap -p DEBUG 2>/dev/null >|"$_tmux_run_base.trap"
  _tmux_run_check
  if [[ -n ${_tmux_run_said-} ]]; then
    printf '%s\n' "$_tmux_run_said" >&2
    _tmux_run_said=
  fi
  if [[ -n ${_tmux_run_telling-} ]]; then
    printf '%s\n' "$_tmux_run_telling" >&2
    _tmux_run_telling=
  fi
  if [[ -z ${_tmux_run_helper_pid-} ]]; then
    _tmux_run_hook_prompt remove
    return $rc
  fi
  _tmux_run_hooks debug
  _tmux_run_report_mode
  ((_tmux_run_prompts++))
  _tmux_run_asking=
  _tmux_run_idle=1
  return $rc
}
declare -ft _tmux_run_prompt

# _tmux_run_serve: reads the rest of the snippet (shell/tmux-run-serve.bash), once. Returns 1
# (said at the next prompt) when it cannot be read.
_tmux_run_serve() {
  [[ -n ${_tmux_run_served-} ]] && return 0
  local f=$_tmux_run_root/shell/tmux-run-serve.bash
  if [[ ! -r $f ]] || ! source "$f"; then
    _tmux_run_said="tmux-run: $f cannot be read; this pane cannot be served (reinstall tmux-run)"
    return 1
  fi
  _tmux_run_served=1
  return 0
}

# _tmux_run_on_winch: the WINCH trap until the helper's first word: nothing to do before BASE.msg
# exists; then the rest is read, whose _tmux_run_on_winch replaces this one.
_tmux_run_on_winch() {
  [[ -n ${_tmux_run_base-} && -e $_tmux_run_base.msg ]] || return 0
  _tmux_run_serve && _tmux_run_on_winch
}

# _tmux_run_check: at a prompt, what happened since the last one: the helper's first word (read
# now if no trap read it), an end the trap left to undo (revoked, failed), a helper that is gone,
# one that says nothing for too long. Before the helper's first word, a start under way is seen
# without the rest of the snippet.
_tmux_run_check() {
  if [[ -z $_tmux_run_served ]]; then
    if [[ -n ${_tmux_run_helper_pid-} && -z ${_tmux_run_ended-} && ! -e $_tmux_run_base.msg ]] &&
      kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
      _tmux_run_starting
      return 0
    fi
    _tmux_run_serve || return 0
  fi
  [[ -n ${_tmux_run_helper_pid-} && -z $_tmux_run_generation ]] && _tmux_run_on_winch
  case ${_tmux_run_ended-} in
    X)
      _tmux_run_teardown
      _tmux_run_said="tmux-run: this pane's enrollment was revoked"
      ;;
    E\ *) _tmux_run_failed "${_tmux_run_ended#E }" ;;
    L\ *) _tmux_run_relaunch "${_tmux_run_ended#L }" ;;
    W\ *) _tmux_run_wake_failed "${_tmux_run_ended#W }" ;;
  esac
  unset _tmux_run_ended
  [[ -n ${_tmux_run_helper_pid-} ]] || return 0
  [[ -n ${_tmux_run_dormant-} ]] && return 0
  [[ -n ${_tmux_run_waking-} ]] && { _tmux_run_wake_pending; return 0; }
  if ! kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
    # Its last word may be D (dormant), not read yet: a command held the prompt.
    _tmux_run_on_winch
    [[ -n ${_tmux_run_dormant-} ]] && return 0
    _tmux_run_gone
  elif [[ -z $_tmux_run_generation ]]; then
    _tmux_run_starting
  fi
  return 0
}

# _tmux_run_report_mode: writes the mode the listings show to the channel when it changed (the
# shell itself decides at each run), and whether notices are off.
_tmux_run_report_mode() {
  local mode=auto sandbox=${TMUX_RUN_SANDBOX:-off} quiet=
  [[ -n ${TMUX_RUN_APPROVE-} && $TMUX_RUN_APPROVE != auto ]] && mode=ask
  case $sandbox in off | workspace | workspace+net | read-only) ;; *) sandbox=invalid ;; esac
  # Notices off: the helper then does not wake the shell for them.
  case ${TMUX_RUN_NOTIFY-} in off | 0 | no | false) quiet=' quiet' ;; esac
  if [[ "$mode $sandbox$quiet" != "$_tmux_run_mode_sent" ]]; then
    printf 'M %s %s%s\n' "$mode" "$sandbox" "$quiet" 2>/dev/null >|"$_tmux_run_base.mode"
    _tmux_run_mode_sent="$mode $sandbox$quiet"
  fi
  return 0
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
  local text= f
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
  [[ -r $ids ]] && read -r -d '' text 2>/dev/null <"$ids"
  [[ $text =~ BUILD_ID\ =\ \"([0-9a-f]+)\" ]] && _tmux_run_exact_id=${BASH_REMATCH[1]}
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

# _tmux_run_starting: a prompt while the helper starts and has not said its first word; one that
# says nothing for 10 seconds is stopped.
_tmux_run_starting() {
  local now
  printf -v now '%(%s)T' -1
  ((now - _tmux_run_since < 10)) && return 0
  _tmux_run_serve && _tmux_run_failed "the helper did not become ready within 10 seconds"
}

# tmux_run_unenroll: ends this pane's enrollment. Returns 0, or 1 when it was not enrolled.
tmux_run_unenroll() {
  if [[ -z ${_tmux_run_helper_pid-} ]]; then
    printf '%s\n' "tmux-run: this shell is not enrolled" >&2
    return 1
  fi
  _tmux_run_serve || return 1
  local REPLY pid=$_tmux_run_helper_pid i=0
  _tmux_run_pane_name
  local pane=$REPLY
  # Dormant: no helper to stop (its pid may be another process's by now).
  [[ -n ${_tmux_run_dormant-} ]] && pid=
  # The helper removes its record first thing on SIGTERM, and lets a run it serves report its end.
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null
  _tmux_run_teardown
  _tmux_run_hook_prompt remove
  while [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && ((i++ < 80)); do command sleep 0.05; done
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  printf '%s\n' "tmux-run: $pane unenrolled"
  return 0
}

[[ $_tmux_run_aliases == on ]] && shopt -s expand_aliases
unset _tmux_run_aliases

_tmux_run_enroll
