# tmux-run.bash: enroll this bash pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.bash    # enroll (again: harmless); in ~/.bashrc
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# Nothing is ever typed into this terminal. A small helper process answers the broker; to ask
# this shell whether it is idle at its prompt, it leaves a request in a file and sends the shell
# SIGWINCH; a WINCH trap (chained with yours, which keeps firing) answers in another file
# (the protocol: helper/shell/signal.ts). bash does not tell a trap what is typed on the line, so
# the helper then reads the pane's screen, read-only, to check that the line is empty.
#
# bash cannot redraw its line from a trap, so no notice is drawn when a run starts or ends, and
# ask mode (TMUX_RUN_APPROVE=ask) refuses every run (approval_unavailable): never a run unasked.
#
# Sourcing defines only names that start with tmux_run_ or _tmux_run_, adds one hook to
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

# _tmux_run_refuse TEXT: says why the pane is not enrolled, and fails.
_tmux_run_refuse() {
  printf '%s\n' "tmux-run: not enrolled: $1" >&2
  return 1
}

# _tmux_run_enroll: checks everything, starts the helper and returns without waiting for it: the
# helper's first word (R when enrolled, E with the reason when not) arrives through the WINCH trap
# or is read at the next prompt (_tmux_run_prompt). Until then the pane is not listed. Returns 0
# when the helper was started (or the shell is enrolled already), 1 with one line on stderr
# otherwise; a refusal leaves nothing behind.
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
  if [[ -z ${TMUX-} || -z ${TMUX_PANE-} ]]; then
    _tmux_run_refuse "this shell is not running inside tmux (TMUX and TMUX_PANE are unset)"
    return 1
  fi
  if [[ -n ${_tmux_run_helper_pid-} ]] && kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
    # Still starting (sourced twice in start-up files, say): that start goes on, silently.
    [[ -n ${_tmux_run_generation-} ]] &&
      printf '%s\n' "tmux-run: pane $TMUX_PANE is already enrolled (generation $_tmux_run_generation)" >&2
    return 0
  fi
  # Its helper died unnoticed (no prompt since): say so first, as a prompt would have.
  [[ -n ${_tmux_run_helper_pid-} ]] && _tmux_run_prompt

  local dir node main base um
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
  _tmux_run_umask
  um=$REPLY
  # The files the shell writes again and again are made once, 0600; a write keeps their mode.
  umask 077
  if ! { : >"$base.trap" && : >"$base.mode"; } 2>/dev/null; then
    umask "$um"
    _tmux_run_remove "$base.trap" "$base.mode"
    _tmux_run_refuse "cannot create the shell channel in $dir"
    return 1
  fi
  umask "$um"

  # The helper starts in the background, without a job number (disowned) and with no descriptor
  # but /dev/null and its log (0600): none of the shell's. The person's NODE_OPTIONS are not for
  # it; the memory settings are those of shell/tmux-run.zsh (see there). Scripts never see these
  # variables: they run with the shell's own environment, sent at dispatch.
  {
    (
      umask 077
      for _tmux_run_fd in /proc/self/fd/*; do
        _tmux_run_fd=${_tmux_run_fd##*/}
        ((_tmux_run_fd > 2)) && eval "exec $_tmux_run_fd>&-"
      done 2>/dev/null
      export NODE_OPTIONS= MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768
      exec "$node" --max-semi-space-size=1 --max-old-space-size=32 --no-opt --optimize-for-size --expose-gc -- \
        "$main" "$base" "$$" bash </dev/null >>"$base.log" 2>&1
    ) &
  } 2>/dev/null
  _tmux_run_helper_pid=$!
  disown "$_tmux_run_helper_pid" 2>/dev/null
  _tmux_run_base=$base _tmux_run_node=$node _tmux_run_generation= _tmux_run_enrollment=
  _tmux_run_answered= _tmux_run_mode_sent= _tmux_run_said= _tmux_run_idle=0 _tmux_run_z=x
  printf -v _tmux_run_since '%(%s)T' -1
  _tmux_run_ps0='${_tmux_run_z:$((_tmux_run_idle=0,0)):0}'
  _tmux_run_ps2='${_tmux_run_z:$((_tmux_run_idle=2,0)):0}'
  _tmux_run_hook_prompt add
  _tmux_run_hooks
  return 0
}

# _tmux_run_dir: sets REPLY to the registry directory (as src/enrollment/layout.ts decides).
_tmux_run_dir() {
  if [[ -n ${TMUX_RUN_DIR-} ]]; then REPLY=$TMUX_RUN_DIR
  elif [[ -n ${XDG_RUNTIME_DIR-} ]]; then REPLY=$XDG_RUNTIME_DIR/tmux-run
  elif [[ -d /run/user/$EUID && ! -L /run/user/$EUID && -O /run/user/$EUID ]]; then REPLY=/run/user/$EUID/tmux-run
  else REPLY=/tmp/tmux-run-$EUID
  fi
}

# _tmux_run_check_dir DIR: makes DIR (mode 700) when it is missing; fails, saying why, unless it
# is a real directory of this user's that no one else can use (as tmux checks its socket directory).
_tmux_run_check_dir() {
  local dir=$1 mode
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
  mode=$(command stat -c %a -- "$dir" 2>/dev/null)
  if [[ ! $mode =~ ^[0-7]+$ ]] || (( (8#$mode & 8#077) != 0 )); then
    _tmux_run_refuse "$dir is open to other users (mode ${mode:-unknown}); run: chmod 700 '$dir'"
    return 1
  fi
  return 0
}

# _tmux_run_umask: sets REPLY to the shell's umask, read from /proc without a fork.
_tmux_run_umask() {
  local key value
  REPLY=022
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
# array in bash 5.1 and later), or takes it out.
_tmux_run_hook_prompt() {
  local i
  if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    for i in "${!PROMPT_COMMAND[@]}"; do
      [[ ${PROMPT_COMMAND[i]} == _tmux_run_prompt ]] && unset 'PROMPT_COMMAND[i]'
    done
    [[ $1 == add ]] && PROMPT_COMMAND+=(_tmux_run_prompt)
    return 0
  fi
  local pc=${PROMPT_COMMAND-}
  pc=${pc//$'\n'_tmux_run_prompt/}
  pc=${pc//_tmux_run_prompt/}
  [[ $1 == add ]] && pc=${pc:+$pc$'\n'}_tmux_run_prompt
  PROMPT_COMMAND=$pc
  [[ -n $PROMPT_COMMAND ]] || unset PROMPT_COMMAND
  return 0
}

# _tmux_run_has_hook: true while _tmux_run_prompt is in PROMPT_COMMAND.
_tmux_run_has_hook() {
  local e
  for e in "${PROMPT_COMMAND[@]}"; do [[ $e == *_tmux_run_prompt* ]] && return 0; done
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
  [[ ${PS0-} == *"$_tmux_run_ps0"* ]] || PS0=$_tmux_run_ps0${PS0-}
  [[ ${PS2-} == *"$_tmux_run_ps2"* ]] || PS2=$_tmux_run_ps2${PS2-}
  return 0
}

# _tmux_run_unhook: puts the person's traps, PS0 and PS2 back as they are without the hooks.
_tmux_run_unhook() {
  local REPLY
  _tmux_run_trap_of WINCH
  if [[ $REPLY == "$_tmux_run_winch_prefix"* ]]; then
    REPLY=${REPLY#"$_tmux_run_winch_prefix"}
    REPLY=${REPLY#$'\n'}
    if [[ -n $REPLY ]]; then trap -- "$REPLY" WINCH; else trap - WINCH; fi
  fi
  # (A function cannot read the DEBUG trap back: the person's action it wrapped last is put back.)
  [[ -n ${_tmux_run_debug_user-} ]] && trap -- "$_tmux_run_debug_user" DEBUG
  unset _tmux_run_debug_user
  [[ -n ${PS0+x} ]] && PS0=${PS0//"$_tmux_run_ps0"/}
  [[ -n ${PS2+x} ]] && PS2=${PS2//"$_tmux_run_ps2"/}
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
  if [[ -z ${_tmux_run_helper_pid-} ]]; then
    _tmux_run_hook_prompt remove
    return $rc
  fi
  _tmux_run_hooks debug
  _tmux_run_report_mode
  _tmux_run_idle=1
  return $rc
}
declare -ft _tmux_run_prompt

# _tmux_run_check: at a prompt, what happened since the last one: the helper's first word (read
# now if no trap read it), an end the trap left to undo (revoked, failed), a helper that is gone,
# one that says nothing for too long.
_tmux_run_check() {
  [[ -n ${_tmux_run_helper_pid-} && -z $_tmux_run_generation ]] && _tmux_run_on_winch
  case ${_tmux_run_ended-} in
    X)
      _tmux_run_teardown
      _tmux_run_said="tmux-run: this pane's enrollment was revoked"
      ;;
    E\ *) _tmux_run_failed "${_tmux_run_ended#E }" ;;
  esac
  unset _tmux_run_ended
  [[ -n ${_tmux_run_helper_pid-} ]] || return 0
  if ! kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
    _tmux_run_gone
  elif [[ -z $_tmux_run_generation ]]; then
    _tmux_run_starting
  fi
  return 0
}

# _tmux_run_report_mode: writes the mode the listings show to the channel when it changed (the
# shell itself decides at each run).
_tmux_run_report_mode() {
  local mode=auto sandbox=${TMUX_RUN_SANDBOX:-off}
  [[ -n ${TMUX_RUN_APPROVE-} && $TMUX_RUN_APPROVE != auto ]] && mode=ask
  case $sandbox in off | workspace | workspace+net | read-only) ;; *) sandbox=invalid ;; esac
  if [[ "$mode $sandbox" != "$_tmux_run_mode_sent" ]]; then
    printf 'M %s %s\n' "$mode" "$sandbox" 2>/dev/null >|"$_tmux_run_base.mode"
    _tmux_run_mode_sent="$mode $sandbox"
  fi
  return 0
}

# _tmux_run_on_winch: the WINCH trap (the person's own action runs after it). Acts only on what
# the helper left in the channel that is new: its first word (R or E), a revocation (X), or a
# request (Q NONCE) not answered yet. A real resize finds nothing new and does nothing.
_tmux_run_on_winch() {
  [[ -n ${_tmux_run_base-} && -z ${_tmux_run_ended-} && -f $_tmux_run_base.msg ]] || return 0
  # Every name local here, in _tmux_run_answer and in _tmux_run_snapshot starts with _tmux_run_:
  # bash's locals are seen by the functions they call, and a local named like a variable the
  # person exported would hide it from the snapshot.
  local -a _tmux_run_said=()
  local _tmux_run_line _tmux_run_nonce=
  mapfile -t _tmux_run_said 2>/dev/null <"$_tmux_run_base.msg" || return 0
  case ${_tmux_run_said[0]-} in
    R\ *) [[ -n $_tmux_run_generation ]] || _tmux_run_started "${_tmux_run_said[0]}" ;;
    E\ * | X)
      # The end of the enrollment, undone at the next prompt: bash misprints a PS0 changed from a
      # trap while readline waits (a run of garbage bytes before the next command's output).
      _tmux_run_ended=${_tmux_run_said[0]}
      return 0
      ;;
    *) return 0 ;;
  esac
  for _tmux_run_line in "${_tmux_run_said[@]:1}"; do
    [[ $_tmux_run_line == Q\ * ]] && _tmux_run_nonce=${_tmux_run_line#Q }
  done
  [[ -n $_tmux_run_nonce && $_tmux_run_nonce != "$_tmux_run_answered" && -n $_tmux_run_generation ]] || return 0
  _tmux_run_answered=$_tmux_run_nonce
  _tmux_run_answer "$_tmux_run_nonce"
  # The person may have replaced PROMPT_COMMAND since: put the hook back (until the next prompt
  # the shell is not marked idle, so runs are refused).
  _tmux_run_has_hook || _tmux_run_hook_prompt add
  return 0
}

# _tmux_run_started LINE: the helper's first word R GENERATION ENROLLMENT: enrolled.
_tmux_run_started() {
  local rest=${1#R } generation enrollment
  generation=${rest%% *} enrollment=${rest#* }
  if [[ $generation =~ ^[0-9a-f]{32}$ && $enrollment =~ ^[0-9a-f]{32}$ ]]; then
    _tmux_run_generation=$generation _tmux_run_enrollment=$enrollment
    return 0
  fi
  _tmux_run_ended="E the helper answered in a way this snippet does not understand"
}

# _tmux_run_answer NONCE: answers the helper's request from the shell's own state: idle at its
# primary prompt (not in a command line, a continuation line, a key binding or a completion),
# and not in ask mode, which bash cannot show. Then the snapshot, then K with the prompt as
# rendered (the helper reads the screen to check that the line is empty); else B and the reason.
_tmux_run_answer() {
  local _tmux_run_nonce=$1 _tmux_run_reason=
  if [[ -n ${READLINE_LINE+x} ]]; then _tmux_run_reason=context:binding
  elif [[ -n ${COMP_LINE+x} ]]; then _tmux_run_reason=context:completion
  elif [[ $_tmux_run_idle == 2 ]]; then _tmux_run_reason=context:continuation
  elif [[ $_tmux_run_idle != 1 ]]; then _tmux_run_reason=busy
  elif ! shopt -q promptvars; then _tmux_run_reason=context:promptvars_off
  elif [[ -n ${TMUX_RUN_APPROVE-} && $TMUX_RUN_APPROVE != auto ]]; then _tmux_run_reason=approval_unavailable
  elif ! _tmux_run_snapshot "$_tmux_run_nonce"; then _tmux_run_reason=snapshot_failed
  fi
  local REPLY um
  _tmux_run_umask
  um=$REPLY
  umask 077
  if [[ -n $_tmux_run_reason ]]; then
    printf 'B %s %s\n' "$_tmux_run_nonce" "$_tmux_run_reason" 2>/dev/null >|"$_tmux_run_base.ans"
  else
    _tmux_run_modes
    local ps1=${PS1-}
    printf 'K %s\n%s\0\0' "$_tmux_run_nonce" "${ps1@P}" 2>/dev/null >|"$_tmux_run_base.ans"
    ((${#_tmux_run_prefixes[@]} == 0)) || printf '%s\0' "${_tmux_run_prefixes[@]}" 2>/dev/null >>"$_tmux_run_base.ans"
  fi
  umask "$um"
  return 0
}

# _tmux_run_modes: sets _tmux_run_prefixes to the mode strings readline draws before the prompt's
# last line when show-mode-in-prompt is on (empty otherwise), read from `bind -v` without a fork.
_tmux_run_modes() {
  _tmux_run_prefixes=()
  local set name value show=
  bind -v 2>/dev/null >|"$_tmux_run_base.trap" || return 0
  while read -r set name value; do
    case $name in
      show-mode-in-prompt) [[ $value == on ]] && show=1 ;;
      vi-ins-mode-string | vi-cmd-mode-string | emacs-mode-string) _tmux_run_prefixes+=("$value") ;;
    esac
  done 2>/dev/null <"$_tmux_run_base.trap"
  [[ -n $show ]] || _tmux_run_prefixes=()
  return 0
}

# _tmux_run_snapshot NONCE: writes NONCE, PWD and the exported environment (NUL-separated, as
# helper/shell/snapshot.ts reads it) to a new 0600 file (noclobber: O_EXCL; the helper removed the
# last one); with TMUX_RUN_SANDBOX set and not off, also the parameters the sandbox reads, exported
# or not, as :NAME=VALUE entries (an array joined with colons). Returns 1 when it cannot.
_tmux_run_snapshot() {
  # (Locals named _tmux_run_* until the exports are read: see _tmux_run_on_winch.)
  local - _tmux_run_n _tmux_run_ok=0
  local -a _tmux_run_kv=() _tmux_run_names=()
  set +u -C
  compgen -e 2>/dev/null >|"$_tmux_run_base.trap" && mapfile -t _tmux_run_names 2>/dev/null <"$_tmux_run_base.trap"
  for _tmux_run_n in "${_tmux_run_names[@]}"; do _tmux_run_kv+=("$_tmux_run_n=${!_tmux_run_n}"); done
  local REPLY um
  if [[ -n ${TMUX_RUN_SANDBOX-} && $TMUX_RUN_SANDBOX != off ]]; then
    for _tmux_run_n in TMUX_RUN_SANDBOX TMUX_RUN_SANDBOX_WRITE TMUX_RUN_SANDBOX_HIDE HOME ZDOTDIR XDG_CONFIG_HOME \
      XDG_RUNTIME_DIR SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS TMUX TMUX_TMPDIR; do
      declare -p "$_tmux_run_n" >/dev/null 2>&1 || continue
      _tmux_run_joined "$_tmux_run_n"
      _tmux_run_kv+=(":$_tmux_run_n=$REPLY")
    done
  fi
  _tmux_run_umask
  um=$REPLY
  umask 077
  { printf '%s\0%s' "$1" "$PWD" && printf '\0%s' "${_tmux_run_kv[@]}"; } 2>/dev/null >"$_tmux_run_base.env" || _tmux_run_ok=1
  umask "$um"
  return $_tmux_run_ok
}

# _tmux_run_joined NAME: sets REPLY to the parameter NAME, an array joined with colons.
_tmux_run_joined() {
  local IFS=:
  local -n _tmux_run_ref=$1
  REPLY="${_tmux_run_ref[*]}"
}

# _tmux_run_starting: a prompt while the helper starts and has not said its first word; one that
# says nothing for 10 seconds is stopped.
_tmux_run_starting() {
  local now
  printf -v now '%(%s)T' -1
  ((now - _tmux_run_since < 10)) && return 0
  _tmux_run_failed "the helper did not become ready within 10 seconds"
}

# _tmux_run_gone: the helper is gone (the prompt found it so): before its first word, the reason
# is its E line or its log; after it, the enrollment is lost.
_tmux_run_gone() {
  if [[ -n $_tmux_run_generation ]]; then
    _tmux_run_lost
    return 0
  fi
  local REPLY
  _tmux_run_log_reason "$_tmux_run_base.log"
  _tmux_run_failed "the helper exited before it was ready: $REPLY"
}

# _tmux_run_log_reason LOG: sets REPLY to the line of a helper's log that best says why it stopped.
_tmux_run_log_reason() {
  local line pick= last=
  if [[ -r $1 ]]; then
    while IFS= read -r line || [[ -n $line ]]; do
      [[ $line == *[![:space:]]* ]] || continue
      last=$line
      [[ $line =~ enrollment\ failed|fatal|[Ee]rror ]] && pick=$line
    done <"$1"
  fi
  pick=${pick:-$last}
  [[ $pick == *'tmux-run-helper['*']: '* ]] && pick=${pick#*'tmux-run-helper['*']: '}
  REPLY=${pick:-it printed nothing}
  REPLY=${REPLY:0:300}
}

# _tmux_run_failed REASON: the helper could not enroll this shell: stops it, undoes the
# enrollment but keeps the helper's log, and says why at the next prompt (a trap cannot print).
_tmux_run_failed() {
  local log=$_tmux_run_base.log
  kill -TERM "$_tmux_run_helper_pid" 2>/dev/null
  _tmux_run_teardown keep-log
  [[ -s $log ]] || { _tmux_run_remove "$log"; log=; }
  local where=
  [[ -n $log ]] && where=" (the helper's log: $log)"
  _tmux_run_said="tmux-run: not enrolled: $1$where"
  return 0
}

# _tmux_run_lost: the helper of this enrollment is gone (killed, crashed): says so, undoes the
# enrollment, and starts the orphan sweep (src/broker/shell-sweep.ts), which stops the runs it
# held and removes the enrollment's record, socket and run journal once it has read them.
_tmux_run_lost() {
  local pane=$TMUX_PANE dir=${_tmux_run_base%/*} enrollment=$_tmux_run_enrollment node=$_tmux_run_node
  local sweep=$_tmux_run_root/dist/src/broker/shell-sweep-main.js
  if [[ -n $enrollment && -f $dir/$enrollment.json ]]; then
    _tmux_run_teardown keep-record
    if [[ -r $sweep ]]; then
      _tmux_run_detach /dev/null "$node" -- "$sweep" "$dir" "$enrollment"
    else
      _tmux_run_remove "$dir/$enrollment.json" "$dir/$enrollment.sock" "$dir/$enrollment.status"
    fi
  else
    _tmux_run_teardown
  fi
  printf '%s\n' "tmux-run: the helper for pane $pane exited; this pane is no longer enrolled (source $_tmux_run_snippet to enroll it again)" >&2
  return 0
}

# _tmux_run_detach LOG COMMAND...: runs COMMAND in the background, disowned, with no descriptor
# but /dev/null and LOG, without the person's NODE_OPTIONS.
_tmux_run_detach() {
  local log=$1
  shift
  {
    (
      for _tmux_run_fd in /proc/self/fd/*; do
        _tmux_run_fd=${_tmux_run_fd##*/}
        ((_tmux_run_fd > 2)) && eval "exec $_tmux_run_fd>&-"
      done 2>/dev/null
      export NODE_OPTIONS=
      exec "$@" </dev/null >>"$log" 2>&1
    ) &
  } 2>/dev/null
  disown $! 2>/dev/null
  return 0
}

# _tmux_run_teardown [keep-log|keep-record]: undoes exactly what enrollment did (hooks, files,
# names); keep-log leaves the helper's log for the person to read, keep-record the record and
# socket for the orphan sweep. The helper removes its own files when it ends; removing them here
# as well covers a helper that was killed and could not. The PROMPT_COMMAND hook stays until it
# has said what is to be said.
_tmux_run_teardown() {
  if [[ -n ${_tmux_run_base-} ]]; then
    _tmux_run_unhook
    local -a files=("$_tmux_run_base".{msg,new,ans,mode,env,trap})
    [[ ${1-} == keep-log ]] || files+=("$_tmux_run_base.log")
    [[ -n $_tmux_run_enrollment && ${1-} != keep-record ]] &&
      files+=("${_tmux_run_base%/*}/$_tmux_run_enrollment".{json,sock})
    _tmux_run_remove "${files[@]}"
  fi
  unset _tmux_run_helper_pid _tmux_run_base _tmux_run_generation _tmux_run_enrollment _tmux_run_node
  unset _tmux_run_answered _tmux_run_mode_sent _tmux_run_idle _tmux_run_since _tmux_run_prefixes
  return 0
}

# tmux_run_unenroll: ends this pane's enrollment. Returns 0, or 1 when it was not enrolled.
tmux_run_unenroll() {
  if [[ -z ${_tmux_run_helper_pid-} ]]; then
    printf '%s\n' "tmux-run: this shell is not enrolled" >&2
    return 1
  fi
  local pane=$TMUX_PANE pid=$_tmux_run_helper_pid i=0
  # The helper removes its record first thing on SIGTERM, and lets a run it serves report its end.
  kill -TERM "$pid" 2>/dev/null
  _tmux_run_teardown
  _tmux_run_hook_prompt remove
  while kill -0 "$pid" 2>/dev/null && ((i++ < 80)); do command sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  printf '%s\n' "tmux-run: pane $pane unenrolled"
  return 0
}

[[ $_tmux_run_aliases == on ]] && shopt -s expand_aliases
unset _tmux_run_aliases

_tmux_run_enroll
