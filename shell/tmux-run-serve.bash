# tmux-run-serve.bash: the rest of shell/tmux-run.bash, read by it once its helper first has
# something to say (_tmux_run_serve): answering the helper's requests, asking in ask mode, notices,
# the builtin's load, dormancy and waking, and the end of an enrollment. Not for sourcing by hand:
# source shell/tmux-run.bash. Kept apart so that bash does not parse it on its way to the first
# prompt; its names, like the snippet's, start with _tmux_run_.
if [[ -z ${_tmux_run_root-} ]]; then
  printf '%s\n' "tmux-run: source shell/tmux-run.bash, not this file" >&2
  return 1
fi

# The person's aliases must not change the functions below (as in tmux-run.bash).
if shopt -q expand_aliases; then _tmux_run_aliases=on; else _tmux_run_aliases=; fi
shopt -u expand_aliases

# _tmux_run_refuse TEXT: says why the pane is not enrolled, and fails.
_tmux_run_refuse() {
  printf '%s\n' "tmux-run: not enrolled: $1" >&2
  return 1
}

# _tmux_run_refusal WHY DIR NODE: what _tmux_run_enroll found (WHY) said, in _tmux_run_said.
_tmux_run_refusal() {
  local dir=$2 node=$3 text
  case $1 in
    string) text="this bash runs a command string (bash -c) and never waits at a prompt" ;;
    interactive) text="this bash is not interactive" ;;
    tmux) text="this shell is not running inside tmux (TMUX and TMUX_PANE are unset)" ;;
    restricted) text="this bash is restricted (rbash): once started it cannot write the files tmux-run answers through" ;;
    relative) text="the directory $dir is not an absolute path; set TMUX_RUN_DIR to one" ;;
    symlink) text="$dir is a symlink; refusing to use it (remove it or set TMUX_RUN_DIR)" ;;
    missing) text="cannot create the directory $dir" ;;
    file) text="$dir is not a directory (remove it or set TMUX_RUN_DIR)" ;;
    owner) text="$dir belongs to another user, not to you (uid $EUID); remove it or set TMUX_RUN_DIR" ;;
    channel) text="cannot create the shell channel in $dir" ;;
    main) text="the helper $_tmux_run_root/dist/helper/main.js is missing; run 'npm install' in $_tmux_run_root" ;;
    node)
      if [[ -n ${TMUX_RUN_NODE-} ]]; then
        text="TMUX_RUN_NODE=$node is not a program that can be run (set it to node's absolute path, or unset it to use node on PATH)"
      else
        text="node was not found on PATH (set TMUX_RUN_NODE to its path)"
      fi
      ;;
    *) text=$1 ;;
  esac
  _tmux_run_said="tmux-run: not enrolled: $text"
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

# _tmux_run_report_mode: writes the mode the listings show (and whether notices are off: the
# helper then does not wake the shell for them) when it changed.
_tmux_run_report_mode() {
  local mode=auto sandbox=${TMUX_RUN_SANDBOX:-off} quiet=
  [[ -n ${TMUX_RUN_APPROVE-} && $TMUX_RUN_APPROVE != auto ]] && mode=ask
  case $sandbox in off | workspace | workspace+net | read-only) ;; *) sandbox=invalid ;; esac
  case ${TMUX_RUN_NOTIFY-} in off | 0 | no | false) quiet=' quiet' ;; esac
  if [[ "$mode $sandbox$quiet" != "$_tmux_run_mode_sent" ]]; then
    # (Made here, not on the way to the first prompt: the helper reads it only once it has spoken.)
    [[ -e $_tmux_run_base.mode ]] || _tmux_run_create "$_tmux_run_base" mode || return 0
    printf 'M %s %s%s\n' "$mode" "$sandbox" "$quiet" 2>/dev/null >|"$_tmux_run_base.mode"
    _tmux_run_mode_sent="$mode $sandbox$quiet"
  fi
  return 0
}

# _tmux_run_pane_name: sets REPLY to how messages name this pane: its tmux id, or at the far end
# of a `tmux-run ssh` session (no tmux of the pane's here) the session's pane.
_tmux_run_pane_name() {
  if [[ -n ${_tmux_run_remote-} ]]; then REPLY="the pane of this ssh session"; else REPLY="pane $TMUX_PANE"; fi
}

# _tmux_run_enroll_again: shell/tmux-run.bash sourced in a bash that is not new to it, or under
# ble.sh: ble.sh refuses; an enrollment that is there (awake, starting or dormant) is said and kept;
# a helper that died unnoticed (no prompt since) is said first, as a prompt would have. Returns 0
# (nothing more to do), 1 (refused) or 2 (enroll anew).
_tmux_run_enroll_again() {
  if [[ -n ${BLE_VERSION-} ]]; then
    _tmux_run_ble_refuse
    return 1
  fi
  [[ -n ${TMUX_RUN_REFUSED-} ]] && unset TMUX_RUN_REFUSED
  local REPLY
  _tmux_run_pane_name
  if [[ -n ${_tmux_run_dormant-}${_tmux_run_waking-} ]]; then
    printf '%s\n' "tmux-run: $REPLY is already enrolled (generation $_tmux_run_generation; its helper is dormant until a run needs it)" >&2
    return 0
  fi
  if [[ -n ${_tmux_run_helper_pid-} ]] && kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
    # Still starting (sourced twice in start-up files, say): that start goes on, silently.
    [[ -n ${_tmux_run_generation-} ]] &&
      printf '%s\n' "tmux-run: $REPLY is already enrolled (generation $_tmux_run_generation)" >&2
    return 0
  fi
  [[ -n ${_tmux_run_helper_pid-} ]] && _tmux_run_prompt
  return 2
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

# _tmux_run_prompt_served: the PROMPT_COMMAND hook (_tmux_run_prompt) once the rest is read, or
# whenever the helper is not simply starting. Says what is to be said (a failed start, a
# revocation, a lost helper), notices a helper that is gone, keeps the hooks in place, reports the
# mode, and marks the shell idle at its primary prompt.
_tmux_run_prompt_served() {
  [[ -n ${_tmux_run_base-} ]] && { trap -p DEBUG; printf '\0'; } 2>/dev/null 1<>"$_tmux_run_base.trap"
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
    return 0
  fi
  _tmux_run_hooks
  _tmux_run_report_mode
  ((_tmux_run_prompts++))
  _tmux_run_asking=
  _tmux_run_idle=1
  return 0
}
declare -ft _tmux_run_prompt_served

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

# _tmux_run_starting: a prompt while the helper starts and has not said its first word; one that
# says nothing for 10 seconds is stopped.
_tmux_run_starting() {
  local now
  _tmux_run_clock now
  ((now - _tmux_run_since < 10)) && return 0
  _tmux_run_serve && _tmux_run_failed "the helper did not become ready within 10 seconds"
}

# _tmux_run_exact_known: the builtin's plan as the helper's child made it and wrote it in BASE.check
# (shell/tmux-run-start.bash), for the shell to follow once the helper has spoken.
_tmux_run_exact_known() {
  local line=
  [[ -n $_tmux_run_exact$_tmux_run_exact_so$_tmux_run_exact_why ]] && return 0
  read -r line 2>/dev/null <"$_tmux_run_base.check"
  case $line in
    exact) _tmux_run_exact=1 ;;
    load\ /*)
      _tmux_run_exact_so=${line#load }
      _tmux_run_build_id
      ;;
    *) _tmux_run_exact_why=${line#screen } ;;
  esac
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

# _tmux_run_on_winch: the WINCH trap (the person's own action runs after it). Acts only on what
# the helper left in the channel that is new: its first word (R or E), a revocation (X), or a
# request (Q NONCE) not answered yet. A real resize finds nothing new and does nothing.
_tmux_run_on_winch() {
  [[ -n ${_tmux_run_dormant-} ]] && { _tmux_run_wake_asked; return 0; }
  if [[ -n ${_tmux_run_waking-} && -z ${_tmux_run_ended-} ]]; then
    _tmux_run_wake_pending trap
    [[ -n ${_tmux_run_waking-} ]] && return 0
  fi
  [[ -n ${_tmux_run_base-} && -z ${_tmux_run_ended-} && -f $_tmux_run_base.msg ]] || return 0
  # Every name local here, in _tmux_run_answer and in _tmux_run_snapshot starts with _tmux_run_:
  # bash's locals are seen by the functions they call, and a local named like a variable the
  # person exported would hide it from the snapshot.
  local -a _tmux_run_said=()
  local _tmux_run_line _tmux_run_nonce=
  mapfile -t _tmux_run_said 2>/dev/null <"$_tmux_run_base.msg" || return 0
  case ${_tmux_run_said[0]-} in
    R\ *)
      [[ -n $_tmux_run_generation ]] || _tmux_run_started "${_tmux_run_said[0]}"
      [[ -z ${_tmux_run_ended-} ]] || return 0
      ;;
    D)
      [[ -n $_tmux_run_generation && -z ${_tmux_run_waking-} ]] && _tmux_run_dormant=1
      return 0
      ;;
    E\ * | X)
      # The end of the enrollment, undone at the next prompt: bash misprints a PS0 changed from a
      # trap while readline waits (a run of garbage bytes before the next command's output).
      _tmux_run_ended=${_tmux_run_said[0]}
      return 0
      ;;
    *) return 0 ;;
  esac
  local _tmux_run_details= _tmux_run_note=
  for _tmux_run_line in "${_tmux_run_said[@]:1}"; do
    case $_tmux_run_line in
      Q\ *) _tmux_run_nonce=${_tmux_run_line#Q } ;;
      P\ *) _tmux_run_details=${_tmux_run_line#P } ;;
      N\ *) _tmux_run_note=${_tmux_run_line#N } ;;
      S\ *) _tmux_run_tell_once "${_tmux_run_line#S }" ;;
    esac
  done
  [[ -n $_tmux_run_note ]] && _tmux_run_notice_line "$_tmux_run_note"
  # Ask mode: the run's details for the question this shell said it is asking.
  if [[ -n $_tmux_run_asking && $_tmux_run_nonce == "$_tmux_run_asking" && $_tmux_run_details == "$_tmux_run_asking "* ]]; then
    _tmux_run_asking=
    _tmux_run_approve "$_tmux_run_nonce" "${_tmux_run_details#* }"
    return 0
  fi
  [[ -n $_tmux_run_nonce && $_tmux_run_nonce != "$_tmux_run_answered" && -n $_tmux_run_generation ]] || return 0
  _tmux_run_answered=$_tmux_run_nonce
  _tmux_run_answer "$_tmux_run_nonce"
  # The person may have replaced PROMPT_COMMAND since: put the hook back (until the next prompt
  # the shell is not marked idle, so runs are refused).
  _tmux_run_has_hook || _tmux_run_hook_prompt add
  return 0
}

# _tmux_run_tell_once TEXT: what the helper found about this pane (S TEXT: the screen check cannot
# serve this prompt), said once, before the next prompt (a trap's output would be drawn over). Not
# _tmux_run_said: the WINCH trap that calls it has a local of that name, which bash would set.
_tmux_run_tell_once() {
  [[ $1 == "${_tmux_run_told-}" ]] && return 0
  _tmux_run_told=$1
  _tmux_run_telling=$1
}

# _tmux_run_started LINE: the helper's first word R GENERATION ENROLLMENT[ load]: enrolled; with
# load, the helper found the builtin safe to load: loaded now (_tmux_run_exact_now), before any
# request is answered. The hook goes back in PROMPT_COMMAND if .bashrc replaced it after sourcing.
_tmux_run_started() {
  local rest=${1#R } generation enrollment load=
  [[ $rest == *' load' ]] && load=1 rest=${rest% load}
  generation=${rest%% *} enrollment=${rest#* }
  if [[ $generation =~ ^[0-9a-f]{32}$ && $enrollment =~ ^[0-9a-f]{32}$ ]]; then
    _tmux_run_generation=$generation _tmux_run_enrollment=$enrollment
    _tmux_run_exact_known
    [[ -n $load ]] && _tmux_run_exact_now
    _tmux_run_report_mode
    _tmux_run_has_hook || _tmux_run_hook_prompt add
    return 0
  fi
  _tmux_run_ended="E the helper answered in a way this snippet does not understand"
}

# _tmux_run_answer NONCE: answers the helper's request from the shell's own state: idle at its
# primary prompt (not in a command line, a continuation line, a key binding or a completion), and
# with the builtin, readline's line empty with no key sequence, search or completion under way. In
# ask mode the builtin asks the person first (_tmux_run_approve); without it bash cannot ask.
# Then the snapshot, then K (without the builtin with the prompt as rendered: the helper reads the
# screen to check that the line is empty); else B and the reason.
_tmux_run_answer() {
  local _tmux_run_nonce=$1 _tmux_run_reason=
  if [[ -n ${READLINE_LINE+x} ]]; then _tmux_run_reason=context:binding
  elif [[ -n ${COMP_LINE+x} ]]; then _tmux_run_reason=context:completion
  elif [[ $_tmux_run_idle == 2 ]]; then _tmux_run_reason=context:continuation
  elif [[ $_tmux_run_idle != 1 ]]; then _tmux_run_reason=busy
  elif [[ -n $_tmux_run_exact ]] && ! _tmux_run_exact_state; then :
  elif [[ -z $_tmux_run_exact ]] && ! shopt -q promptvars; then _tmux_run_reason=context:promptvars_off
  elif [[ -n ${TMUX_RUN_APPROVE-} && $TMUX_RUN_APPROVE != auto ]]; then
    if [[ -z $_tmux_run_exact ]]; then _tmux_run_reason=approval_unavailable
    else
      # (A sandbox value the helper does not know is refused by it, sandbox_unavailable: nothing to ask.)
      case ${TMUX_RUN_SANDBOX:-off} in
        off | workspace | workspace+net | read-only)
          _tmux_run_ask_start "$_tmux_run_nonce"
          return 0
          ;;
      esac
    fi
  fi
  [[ -z $_tmux_run_reason ]] && ! _tmux_run_snapshot "$_tmux_run_nonce" && _tmux_run_reason=snapshot_failed
  if [[ -n $_tmux_run_exact ]]; then
    if [[ -n $_tmux_run_reason ]]; then _tmux_run_reply "B $_tmux_run_nonce $_tmux_run_reason"
    else _tmux_run_reply "K $_tmux_run_nonce"
    fi
    return 0
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

# _tmux_run_exact_now: the helper found the builtin safe (R ... load): loads it and checks that it
# is of this install's build; then exact (BASE.check says so, for a helper woken later). Else the
# helper is started again on the screen check at the next prompt (_tmux_run_relaunch): until then
# no request is answered (a helper that counts on the builtin must not get a screen-less K).
_tmux_run_exact_now() {
  local so=$_tmux_run_exact_so line=
  [[ -n $so && -z $_tmux_run_exact ]] || return 0
  if ! compgen -A enabled -X '!_tmux_run_line' -- _tmux_run_line >/dev/null 2>&1 &&
    ! enable -f "$so" _tmux_run_line 2>|"$_tmux_run_base.trap"; then
    read -r line 2>/dev/null <"$_tmux_run_base.trap"
    _tmux_run_ended="L bash could not load $so (${line:-enable -f failed}): a bash without loadable builtins, or one that does not export readline's state"
    return 0
  fi
  if ! _tmux_run_line build "$_tmux_run_exact_id"; then
    enable -d _tmux_run_line 2>/dev/null
    _tmux_run_ended="L the builtin $so is of another build of tmux-run than this install; run 'npm run build' in $_tmux_run_root"
    return 0
  fi
  _tmux_run_exact=1
  _tmux_run_write_check "$_tmux_run_base"
  return 0
}

# _tmux_run_relaunch REASON: the builtin the helper checked could not be loaded after all: that
# helper is stopped (it removes its record) and another started at once on the screen check, with
# REASON, in a channel of its own.
_tmux_run_relaunch() {
  local old=$_tmux_run_base REPLY
  kill -TERM "$_tmux_run_helper_pid" 2>/dev/null
  _tmux_run_exact= _tmux_run_exact_so= _tmux_run_exact_why=$1
  _tmux_run_base=${old%/*}/ch.$$.$RANDOM$RANDOM
  if ! _tmux_run_create "$_tmux_run_base" trap mode check; then
    _tmux_run_base=$old
    _tmux_run_failed "cannot create the shell channel in ${old%/*}"
    return 0
  fi
  _tmux_run_write_check "$_tmux_run_base"
  _tmux_run_remove "$old".{msg,new,old,ans,mode,env,trap,check,log}
  _tmux_run_launch "$_tmux_run_base" "$_tmux_run_node" "$_tmux_run_root/dist/helper/main.js"
  _tmux_run_generation= _tmux_run_enrollment= _tmux_run_answered= _tmux_run_mode_sent=
  _tmux_run_clock _tmux_run_since
  return 0
}

# _tmux_run_exact_state: true when readline waits at an empty line with nothing under way; else
# false with the reason in _tmux_run_reason (its caller's local; the statuses of
# helper/shell/bash/bash-line.c, `state`).
_tmux_run_exact_state() {
  _tmux_run_line state
  case $? in
    0) return 0 ;;
    10) _tmux_run_reason=editor_not_empty ;;
    11) _tmux_run_reason=context:history_search ;;
    12) _tmux_run_reason=context:key_sequence ;;
    13) _tmux_run_reason=context:continuation ;;
    *) _tmux_run_reason=context:not_reading ;;
  esac
  return 1
}

# _tmux_run_notify_on: true unless TMUX_RUN_NOTIFY turns notices off (or there is no builtin).
_tmux_run_notify_on() {
  [[ -n $_tmux_run_exact ]] || return 1
  case ${TMUX_RUN_NOTIFY-} in off | 0 | no | false) return 1 ;; esac
  return 0
}

# _tmux_run_notice_line 'SEQ TEXT': draws the helper's latest notice once (SEQ not drawn yet),
# above the prompt, replacing the notice drawn before it at the same prompt.
_tmux_run_notice_line() {
  local seq=${1%% *}
  [[ $seq =~ ^[0-9]+$ ]] && ((seq > _tmux_run_noticed)) || return 0
  _tmux_run_noticed=$seq
  _tmux_run_notify_on && _tmux_run_line notice "$_tmux_run_prompts" "${1#* }"
  return 0
}

# _tmux_run_reply LINE: writes the answer file (0600, whatever the umask); a K line with the two
# empty prompt fields of an exact check.
_tmux_run_reply() {
  if [[ -n $_tmux_run_exact ]]; then
    _tmux_run_line answer "$_tmux_run_base.ans" "$1"
    return 0
  fi
  local REPLY um format='%s\n'
  [[ $1 == K\ * ]] && format='%s\n\0\0'
  _tmux_run_umask
  um=$REPLY
  umask 077
  printf "$format" "$1" 2>/dev/null >|"$_tmux_run_base.ans"
  umask "$um"
  return 0
}

# _tmux_run_ask_start NONCE: ask mode: tells the helper at once that the person is asked (A, with
# the timeout), so the wait is theirs; the helper then sends the run's details (P) and wakes the
# shell again (_tmux_run_approve).
_tmux_run_ask_start() {
  local limit=${TMUX_RUN_APPROVE_TIMEOUT:-120}
  [[ $limit =~ ^[0-9]{1,5}$ ]] && ((10#$limit >= 1 && 10#$limit <= 86400)) || limit=120
  _tmux_run_asking=$1
  _tmux_run_reply "A $1 $((10#$limit))"
}

# _tmux_run_approve NONCE 'RUNID DIGEST BYTES LINES PREVIEW': shows the question (as zsh's ask
# mode does) below the line, reads one key through readline: y runs, a runs and remembers the
# digest, anything else refuses; no key within the timeout refuses; the question withdrawn (the
# run cancelled, the helper gone) answers nothing. The line is drawn again as it was.
_tmux_run_approve() {
  local _tmux_run_nonce=$1 _tmux_run_rest=$2 _tmux_run_run _tmux_run_digest _tmux_run_bytes _tmux_run_nlines
  local _tmux_run_client= _tmux_run_in= _tmux_run_note= _tmux_run_limit=${TMUX_RUN_APPROVE_TIMEOUT:-120} _tmux_run_l
  if [[ ! $_tmux_run_limit =~ ^[0-9]{1,5}$ ]] || ((10#$_tmux_run_limit < 1 || 10#$_tmux_run_limit > 86400)); then
    _tmux_run_note="(TMUX_RUN_APPROVE_TIMEOUT=${TMUX_RUN_APPROVE_TIMEOUT:0:20} is not a whole number of seconds from 1 to 86400; using 120)"
    _tmux_run_limit=120
  fi
  _tmux_run_limit=$((10#$_tmux_run_limit))
  _tmux_run_run=${_tmux_run_rest%% *} _tmux_run_rest=${_tmux_run_rest#* }
  _tmux_run_digest=${_tmux_run_rest%% *} _tmux_run_rest=${_tmux_run_rest#* }
  _tmux_run_bytes=${_tmux_run_rest%% *} _tmux_run_rest=${_tmux_run_rest#* }
  _tmux_run_nlines=${_tmux_run_rest%% *} _tmux_run_rest=${_tmux_run_rest#* }
  if [[ ! $_tmux_run_run =~ ^[0-9a-f]{32}$ || ! $_tmux_run_digest =~ ^[0-9a-f]{64}$ || ! $_tmux_run_bytes =~ ^[0-9]+$ || ! $_tmux_run_nlines =~ ^[0-9]+$ ]]; then
    _tmux_run_reply "B $_tmux_run_nonce bad_details"
    return 0
  fi
  if [[ -n ${_tmux_run_always[$_tmux_run_digest]-} ]]; then
    if _tmux_run_snapshot "$_tmux_run_nonce"; then
      _tmux_run_reply "K $_tmux_run_nonce always"
      _tmux_run_notify_on && _tmux_run_line notice "$_tmux_run_prompts" "tmux-run: run ${_tmux_run_run:0:8} approved without asking (you chose [a]lways for script sha256 ${_tmux_run_digest:0:12})"
    else
      _tmux_run_reply "B $_tmux_run_nonce snapshot_failed"
    fi
    return 0
  fi
  # The run's input, last when it takes input (the helper's words), then who asked.
  [[ $_tmux_run_rest == *$'\x1d'* ]] && _tmux_run_in=${_tmux_run_rest##*$'\x1d'} _tmux_run_rest=${_tmux_run_rest%$'\x1d'*}
  [[ $_tmux_run_rest == *$'\x1e'* ]] && _tmux_run_client=${_tmux_run_rest##*$'\x1e'} _tmux_run_rest=${_tmux_run_rest%$'\x1e'*}
  local -a _tmux_run_shown=() _tmux_run_text=()
  IFS=$'\x1f' read -r -a _tmux_run_shown <<<"$_tmux_run_rest"
  _tmux_run_text+=("tmux-run: an agent${_tmux_run_client:+ (${_tmux_run_client//[[:cntrl:]]/?})} asks to run a script in this shell (TMUX_RUN_APPROVE=ask)")
  local _tmux_run_more=$((_tmux_run_nlines - ${#_tmux_run_shown[@]})) _tmux_run_s1=s _tmux_run_s2=s
  ((_tmux_run_nlines == 1)) && _tmux_run_s1=
  ((_tmux_run_more == 1)) && _tmux_run_s2=
  _tmux_run_text+=("  run ${_tmux_run_run:0:8}  sha256 ${_tmux_run_digest:0:12}  $_tmux_run_bytes bytes, $_tmux_run_nlines line$_tmux_run_s1:")
  for _tmux_run_l in "${_tmux_run_shown[@]}"; do _tmux_run_text+=("  | ${_tmux_run_l//[[:cntrl:]]/?}"); done
  ((_tmux_run_more > 0)) && _tmux_run_text+=("  ($_tmux_run_more more line$_tmux_run_s2 not shown)")
  [[ -n $_tmux_run_note ]] && _tmux_run_text+=("  $_tmux_run_note")
  [[ -n $_tmux_run_in ]] && _tmux_run_text+=("  ${_tmux_run_in//[[:cntrl:]]/?}")
  case ${TMUX_RUN_SANDBOX:-off} in
    off) _tmux_run_text+=("  sandbox: off (TMUX_RUN_SANDBOX: it can touch all you can)") ;;
    workspace) _tmux_run_text+=("  sandbox: workspace (writes only under $PWD and a private /tmp; no network)") ;;
    workspace+net) _tmux_run_text+=("  sandbox: workspace+net (writes only under $PWD and a private /tmp; network)") ;;
    read-only) _tmux_run_text+=("  sandbox: read-only (writes only in a private /tmp; no network)") ;;
  esac
  _tmux_run_text+=("Run it? [y]es / [n]o / [a]lways for this script (no answer in $_tmux_run_limit s: no)")
  local _tmux_run_key _tmux_run_msg
  _tmux_run_line ask "$_tmux_run_limit" "$_tmux_run_base.msg" "Q $_tmux_run_nonce" "$_tmux_run_helper_pid" "${_tmux_run_text[@]}"
  _tmux_run_key=$?
  case $_tmux_run_key in
    0 | 20)
      if _tmux_run_snapshot "$_tmux_run_nonce"; then
        _tmux_run_msg="tmux-run: run ${_tmux_run_run:0:8} approved"
        if ((_tmux_run_key == 20)); then
          _tmux_run_always[$_tmux_run_digest]=1
          _tmux_run_reply "K $_tmux_run_nonce a"
          _tmux_run_msg+="; script sha256 ${_tmux_run_digest:0:12} runs without asking while this pane stays enrolled"
        else
          _tmux_run_reply "K $_tmux_run_nonce y"
        fi
      else
        _tmux_run_reply "B $_tmux_run_nonce snapshot_failed"
        _tmux_run_msg="tmux-run: run ${_tmux_run_run:0:8} could not start (the shell's state could not be written)"
      fi
      ;;
    22)
      _tmux_run_reply "D $_tmux_run_nonce approval_timeout"
      _tmux_run_msg="tmux-run: run ${_tmux_run_run:0:8} refused: no answer within $_tmux_run_limit s; nothing was run"
      ;;
    23) _tmux_run_msg="tmux-run: run ${_tmux_run_run:0:8} was cancelled while you were asked; nothing was run" ;;
    *)
      _tmux_run_reply "D $_tmux_run_nonce denied"
      _tmux_run_msg="tmux-run: run ${_tmux_run_run:0:8} refused; nothing was run"
      ;;
  esac
  _tmux_run_notify_on && _tmux_run_line notice "$_tmux_run_prompts" "$_tmux_run_msg"
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
  if [[ -z $_tmux_run_exact ]]; then
    # (Written over, ended by a NUL: _tmux_run_trap_of.)
    { compgen -e; printf '\0'; } 2>/dev/null 1<>"$_tmux_run_base.trap" &&
      IFS=$'\n' read -r -d '' -a _tmux_run_names 2>/dev/null <"$_tmux_run_base.trap"
    for _tmux_run_n in "${_tmux_run_names[@]}"; do _tmux_run_kv+=("$_tmux_run_n=${!_tmux_run_n}"); done
  fi
  local REPLY um
  if [[ -n ${TMUX_RUN_SANDBOX-} && $TMUX_RUN_SANDBOX != off ]]; then
    for _tmux_run_n in TMUX_RUN_SANDBOX TMUX_RUN_SANDBOX_WRITE TMUX_RUN_SANDBOX_HIDE HOME ZDOTDIR XDG_CONFIG_HOME \
      XDG_RUNTIME_DIR SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS TMUX TMUX_TMPDIR; do
      declare -p "$_tmux_run_n" >/dev/null 2>&1 || continue
      _tmux_run_joined "$_tmux_run_n"
      _tmux_run_kv+=(":$_tmux_run_n=$REPLY")
    done
  fi
  # With the builtin: the exports as bash passes them to a command, written by it (faster).
  if [[ -n $_tmux_run_exact ]]; then
    _tmux_run_line snapshot "$_tmux_run_base.env" "$1" "$PWD" "${_tmux_run_kv[@]}"
    return
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

# _tmux_run_gone: the helper is gone (the prompt found it so): before its first word, the reason
# is its E line or its log; after it, the enrollment is lost.
_tmux_run_gone() {
  if [[ -n $_tmux_run_generation ]]; then
    _tmux_run_lost
    return 0
  fi
  local REPLY
  if [[ ! -e $_tmux_run_base.check && ! -e $_tmux_run_base.log ]]; then
    _tmux_run_failed "cannot create the shell channel in ${_tmux_run_base%/*}"
    return 0
  fi
  _tmux_run_log_reason "$_tmux_run_base.log"
  # At the far end, a login that is not a `tmux-run ssh` session: nothing to enroll, nothing to say.
  if [[ -n ${_tmux_run_remote-} && $REPLY == 'not a tmux-run ssh session'* ]]; then
    _tmux_run_teardown
    return 0
  fi
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

# _tmux_run_failed REASON [WHAT]: the helper could not enroll this shell (or, WHAT said, be started
# again for it): stops it, undoes the
# enrollment but keeps the helper's log, and says why at the next prompt (a trap cannot print).
_tmux_run_failed() {
  local log=$_tmux_run_base.log what=${2:-not enrolled}
  kill -TERM "$_tmux_run_helper_pid" 2>/dev/null
  _tmux_run_teardown keep-log
  # (A refusal of the directory itself says all: no log left in a directory others can use.)
  [[ -s $log && $1 != "${log%/*} "* ]] || { _tmux_run_remove "$log"; log=; }
  local where=
  [[ -n $log ]] && where=" (the helper's log: $log)"
  _tmux_run_said="tmux-run: $what: $1$where"
  return 0
}

# _tmux_run_lost: the helper of this enrollment is gone (killed, crashed): says so, undoes the
# enrollment, and starts the orphan sweep (src/broker/shell-sweep.ts), which stops the runs it
# held and removes the enrollment's record, socket and run journal once it has read them.
_tmux_run_lost() {
  local REPLY
  _tmux_run_pane_name
  local pane=$REPLY dir=${_tmux_run_base%/*} enrollment=$_tmux_run_enrollment node=$_tmux_run_node
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
  printf '%s\n' "tmux-run: the helper for $pane exited; this pane is no longer enrolled (source $_tmux_run_snippet to enroll it again)" >&2
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
    local -a files=("$_tmux_run_base".{msg,new,old,ans,mode,env,trap,check,wake})
    [[ ${1-} == keep-log ]] || files+=("$_tmux_run_base.log")
    [[ -n $_tmux_run_enrollment && ${1-} != keep-record ]] &&
      files+=("${_tmux_run_base%/*}/$_tmux_run_enrollment".{json,sock})
    _tmux_run_remove "${files[@]}"
  fi
  unset _tmux_run_helper_pid _tmux_run_base _tmux_run_generation _tmux_run_enrollment _tmux_run_node
  unset _tmux_run_answered _tmux_run_mode_sent _tmux_run_idle _tmux_run_since _tmux_run_prefixes
  unset _tmux_run_asking _tmux_run_noticed _tmux_run_prompts _tmux_run_always _tmux_run_dormant _tmux_run_waking
  return 0
}

# Dormant helpers (docs/light.md). A helper idle for TMUX_RUN_IDLE writes D first in BASE.msg,
# sends SIGWINCH and exits (helper/dormancy.ts); the enrollment stays. A broker that needs it
# writes U into BASE.wake and sends SIGWINCH (src/broker/wake.ts, again every 150 ms until a helper
# serves); the trap starts a helper again, with the same enrollment (helper/wake.ts). X in BASE.wake:
# the enrollment was revoked while dormant.

# _tmux_run_wake_asked: the WINCH trap of a dormant shell: a request in BASE.wake, read once.
_tmux_run_wake_asked() {
  [[ -f $_tmux_run_base.wake ]] || return 0
  local line=
  read -r line 2>/dev/null <"$_tmux_run_base.wake"
  # Emptied, not removed: no fork in the trap (a foreground command would make the shell look busy).
  [[ -n $line ]] && : 2>/dev/null >|"$_tmux_run_base.wake"
  case $line in
    U) _tmux_run_wake ;;
    X) _tmux_run_ended=X ;;
  esac
  return 0
}

# _tmux_run_wake: starts the helper again as the first (_tmux_run_launch, with TMUX_RUN_NODE and
# TMUX_RUN_IDLE as they are now), naming the enrollment in its environment only. Once: the U of
# other brokers meanwhile finds it waking, or awake.
_tmux_run_wake() {
  [[ -n ${_tmux_run_dormant-} ]] || return 0
  _tmux_run_node=${TMUX_RUN_NODE:-node}
  _tmux_run_launch "$_tmux_run_base" "$_tmux_run_node" "$_tmux_run_root/dist/helper/main.js" "$_tmux_run_enrollment"
  _tmux_run_clock _tmux_run_since
  _tmux_run_waking=1
  # The new helper numbers its notices from 1 again.
  _tmux_run_noticed=0
  unset _tmux_run_dormant
  return 0
}

# _tmux_run_wake_pending [trap]: while the woken helper starts: its first word R with this
# enrollment's generations (awake again), or an E line, a helper gone, or one silent for 10 seconds
# (the enrollment ends: _tmux_run_wake_failed; from the trap its record goes at once, so that the
# broker that asked refuses the call, and the rest waits for the prompt: a trap cannot print).
_tmux_run_wake_pending() {
  local line= now REPLY why=
  [[ -f $_tmux_run_base.msg ]] && read -r line 2>/dev/null <"$_tmux_run_base.msg"
  if [[ $line == "R $_tmux_run_generation $_tmux_run_enrollment" ]]; then
    unset _tmux_run_waking
    _tmux_run_mode_sent=
    return 0
  fi
  case $line in
    R\ *) why="the helper answered in a way this snippet does not understand" ;;
    E\ *) why=${line#E } ;;
  esac
  if [[ -z $why ]] && kill -0 "$_tmux_run_helper_pid" 2>/dev/null; then
    _tmux_run_clock now
    ((now - _tmux_run_since < 10)) && return 0
    why="the helper did not become ready within 10 seconds"
  elif [[ -z $why ]]; then
    _tmux_run_log_reason "$_tmux_run_base.log"
    why="the helper exited before it was ready: $REPLY"
  fi
  if [[ ${1-} == trap ]]; then
    kill -TERM "$_tmux_run_helper_pid" 2>/dev/null
    _tmux_run_remove "${_tmux_run_base%/*}/$_tmux_run_enrollment".{json,sock,status}
    _tmux_run_ended="W $why"
    return 0
  fi
  _tmux_run_wake_failed "$why"
}

# _tmux_run_wake_failed REASON: the helper could not be started again: the enrollment ends (its
# record goes, so the broker that asked refuses the call, wake_failed, with nothing run), the log is
# kept, and the pane is told once, before the next prompt.
_tmux_run_wake_failed() {
  local REPLY
  _tmux_run_pane_name
  _tmux_run_failed "$1" "the helper for $REPLY could not be started again, so the pane is no longer enrolled (source $_tmux_run_snippet to enroll it again)"
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

# The builtin's plan and the helper's start (_tmux_run_write_check, _tmux_run_build_id).
if ! source "$_tmux_run_root/shell/tmux-run-start.bash"; then
  [[ $_tmux_run_aliases == on ]] && shopt -s expand_aliases
  unset _tmux_run_aliases
  return 1
fi

[[ $_tmux_run_aliases == on ]] && shopt -s expand_aliases
unset _tmux_run_aliases
return 0
