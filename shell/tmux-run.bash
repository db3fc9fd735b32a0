# tmux-run.bash: enroll this bash pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.bash    # enroll (again: harmless); in ~/.bashrc
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# Nothing is ever typed into this terminal. A helper process answers the broker; it asks this
# shell whether it is idle at its prompt through files and SIGWINCH, which a WINCH trap (chained
# with yours) answers (docs/protocol-signal.md; bash panes: docs/shells.md). This file is only
# what a new pane needs on its way to its first prompt, as few bytes as bash can parse quickly:
# the checks (the reasons said by the rest), the helper's start (a child forked here does the rest
# of it off the shell's way: shell/tmux-run-start.bash) and the prompt hook. The rest
# (shell/tmux-run-serve.bash: refusals, answering, notices, the end, sourcing again, ble.sh,
# bash-preexec) is read once the helper first speaks or a case needs it. Sourcing defines only
# names that start with tmux_run_ or _tmux_run_, adds one hook to PROMPT_COMMAND and a zero-output
# expansion to PS0 and PS2 while enrolled, wraps the WINCH and DEBUG traps (yours still run), and
# changes none of the shell's options.

if [ -z "${BASH_VERSION-}" ]; then
  echo "tmux-run: not enrolled: this shell is not bash; tmux-run.bash needs an interactive bash 4.4 or newer" >&2
  return 1 2>/dev/null || exit 1
fi
# (Defined with alias expansion off: the person's aliases must not change them.)
if shopt -q expand_aliases; then _tmux_run_aliases=on; else _tmux_run_aliases=; fi
shopt -u expand_aliases
_tmux_run_snippet=${BASH_SOURCE[0]}
[[ $_tmux_run_snippet == /* ]] || _tmux_run_snippet=$PWD/$_tmux_run_snippet
_tmux_run_snippet=${_tmux_run_snippet//\/.\//\/}
_tmux_run_root=${_tmux_run_snippet%/*/*}
# (Sourced again, perhaps after an upgrade: the rest is read again too.)
_tmux_run_served=

# _tmux_run_enroll: checks what bash can check without a fork (a refusal: why, from the rest;
# sourced again or under ble.sh: the rest decides, _tmux_run_enroll_again), starts the helper and
# returns 0 at once; its first word (R, or E and why) comes through the WINCH trap or the next
# prompt. The registry directory is made (700) when missing; its mode, and the builtin's, the
# helper checks (bash cannot read a mode without a fork): a refusal is said at the prompt after.
_tmux_run_enroll() {
  local why= dir node=${TMUX_RUN_NODE:-node} base
  if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4))); then
    # (Said here: the rest of the snippet needs bash 4.4 to be read at all.)
    printf '%s\n' "tmux-run: not enrolled: bash $BASH_VERSION is too old; bash 4.4 or newer is required" >&2
    return 1
  elif [[ -n ${BASH_EXECUTION_STRING+x} ]]; then why=string
  elif [[ $- != *i* ]]; then why=interactive
  # (At the far end of a `tmux-run ssh` session, shell/remote/tmux-run-remote.bash, the pane is the local one.)
  elif [[ -z ${_tmux_run_remote-} ]] && [[ -z ${TMUX-} || -z ${TMUX_PANE-} ]]; then why=tmux
  elif shopt -q restricted_shell; then why=restricted
  elif [[ -n ${BLE_VERSION-}${_tmux_run_helper_pid-} ]]; then
    if _tmux_run_serve; then
      _tmux_run_enroll_again
      case $? in 0) return 0 ;; 1) return 1 ;; esac
    else why=serve
    fi
  fi
  if [[ -z $why ]]; then
    [[ -n ${TMUX_RUN_REFUSED-} ]] && unset TMUX_RUN_REFUSED
    if [[ -n ${TMUX_RUN_DIR-} ]]; then dir=$TMUX_RUN_DIR
    elif [[ -n ${XDG_RUNTIME_DIR-} ]]; then dir=$XDG_RUNTIME_DIR/tmux-run
    elif [[ -d /run/user/$EUID && ! -L /run/user/$EUID && -O /run/user/$EUID ]]; then dir=/run/user/$EUID/tmux-run
    else dir=/tmp/tmux-run-$EUID
    fi
    [[ $dir == /* && ! -e $dir && ! -L $dir ]] && command mkdir -m 700 -- "$dir" 2>/dev/null
    if [[ $dir != /* ]]; then why=relative
    elif [[ -L $dir ]]; then why=symlink
    elif [[ ! -e $dir ]]; then why=missing
    elif [[ ! -d $dir ]]; then why=file
    elif [[ ! -O $dir ]]; then why=owner
    elif [[ ! -r $_tmux_run_root/dist/helper/main.js ]]; then why=main
    elif ! type -P -- "$node" >/dev/null && [[ $node != */* || ! -f $node || ! -x $node ]]; then why=node
    fi
  fi
  if [[ -n $why ]]; then
    _tmux_run_serve && _tmux_run_refusal "$why" "$dir" "$node"
    [[ -n ${_tmux_run_said-} ]] && printf '%s\n' "$_tmux_run_said" >&2
    _tmux_run_said=
    return 1
  fi
  # The helper's child starts it once the first prompt is drawn (shell/tmux-run-start.bash). Until
  # its first word the pane is not listed.
  base=$dir/ch.$$.$RANDOM$RANDOM
  if ! _tmux_run_create "$base"; then
    _tmux_run_serve && _tmux_run_remove "$base.trap" && _tmux_run_refusal channel "$dir"
    printf '%s\n' "${_tmux_run_said-}" >&2
    _tmux_run_said=
    return 1
  fi
  _tmux_run_launch "$base" "$node" "$_tmux_run_root/dist/helper/main.js" '' defer
  _tmux_run_base=$base _tmux_run_node=$node _tmux_run_generation= _tmux_run_enrollment=
  _tmux_run_answered= _tmux_run_mode_sent= _tmux_run_said= _tmux_run_idle=0 _tmux_run_z=x
  _tmux_run_asking= _tmux_run_noticed=0 _tmux_run_prompts=0 _tmux_run_told= _tmux_run_telling=
  _tmux_run_exact= _tmux_run_exact_so= _tmux_run_exact_why= _tmux_run_exact_id=
  declare -gA _tmux_run_always=()
  _tmux_run_clock _tmux_run_since
  _tmux_run_ps0='${_tmux_run_z:$((_tmux_run_idle=0,0)):0}'
  _tmux_run_ps2='${_tmux_run_z:$((_tmux_run_idle=2,0)):0}'
  # Last in PROMPT_COMMAND (a string); an array or bash-preexec: the rest places it.
  if [[ -z ${precmd_functions+x}${bash_preexec_imported-}${__bp_imported-} && ${PROMPT_COMMAND-} != *_tmux_run_prompt* && (-z ${PROMPT_COMMAND+x} || ${PROMPT_COMMAND@a} != *a*) ]]; then
    PROMPT_COMMAND=${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}_tmux_run_prompt
  elif _tmux_run_serve; then
    _tmux_run_hook_prompt add
  fi
  _tmux_run_hooks
  return 0
}

# _tmux_run_launch BASE NODE MAIN [WAKE] [defer]: starts the helper, disowned (its pid in
# _tmux_run_helper_pid): a child that makes BASE.check (O_EXCL, 0600); with defer (a new
# enrollment), waits until readline waits for a key with none typed ahead, that is once the first
# prompt is drawn (the shell asleep in select or poll, as /proc/PID/wchan shows; at most 5
# seconds), as zsh's helper starts when its line editor first waits: a command typed at once runs
# first, and neither the rest of the start nor Node's competes with the rest of .bashrc or the
# prompt. (Should PROMPT_COMMAND be replaced later in .bashrc, the helper's first word, heard by the
# WINCH trap, puts the hook back.) It looks every 10 ms, in a read with a timeout from a descriptor
# that never has data: a new pseudo-terminal's master (/dev/ptmx, no process), else the pipe of a
# `sleep` (one fork, in the child). Then it reads shell/tmux-run-start.bash and becomes node there.
# The child leaves the job table at once: by `disown -r` when it is the shell's only job (bash's
# `disown PID` first fills a table of saved statuses sized by `ulimit -u`, 0.3-2 ms: BENCHMARKS.md;
# -r drops running jobs without it), else (another job, or the child already ended) by its pid.
_tmux_run_launch() {
  local alone=
  compgen -A job >/dev/null 2>&1
  (($? == 1)) && alone=1
  (
    exec 2>/dev/null
    umask 077
    set -C
    { : >"$1.check" || [[ -f $1.check && -O $1.check && ! -L $1.check ]]; } || exit 1
    if [[ -n ${5-} ]]; then
      local i w p s=
      exec {p}<>/dev/ptmx || { exec {p}< <(exec sleep 6 </dev/null); s=$!; }
      for ((i = 0; i < 500; i++)); do
        w=
        read -r w </proc/$$/wchan
        [[ -n $w ]] || exit 0
        [[ $w == *select* || $w == *poll* ]] && break
        read -r -t 0.01 -u "$p" w
      done
      [[ -n $s ]] && kill "$s"
      exec {p}<&-
    fi
    source "$_tmux_run_root/shell/tmux-run-start.bash" && _tmux_run_child "$@"
  ) &
  _tmux_run_helper_pid=$!
  if [[ -n $alone ]]; then
    disown -r
    compgen -A job >/dev/null 2>&1
    (($? == 1)) && return 0
  fi
  disown "$_tmux_run_helper_pid" 2>/dev/null
}

# _tmux_run_create BASE [SUFFIX...]: makes the channel's files the shell writes again and again
# (trap, or the SUFFIXes; mode is made at its first write, once the helper has spoken), 0600 (a
# write keeps their mode), each new (noclobber: O_EXCL, so nothing planted there is followed) or
# found made by this user.
_tmux_run_create() {
  local - um REPLY ok=0 b=$1 s
  shift
  (($#)) || set -- trap
  set -C
  _tmux_run_umask
  um=$REPLY
  umask 077
  for s in "$@"; do : 2>/dev/null >"$b.$s" || [[ -f $b.$s && -O $b.$s && ! -L $b.$s ]] || ok=1; done
  umask "$um"
  return $ok
}

# _tmux_run_clock NAME: sets NAME to the seconds since the epoch: EPOCHSECONDS (bash 5), else
# printf's %(%s)T (4.4), which reads the time zone first (~0.04 ms the first time).
_tmux_run_clock() {
  printf -v "$1" %s "${EPOCHSECONDS-}"
  [[ -n ${!1} ]] || printf -v "$1" '%(%s)T' -1
}

# _tmux_run_umask: sets REPLY to the shell's umask, read from /proc without a fork (the second line
# from Linux 4.7 on).
_tmux_run_umask() {
  local key value
  REPLY=022
  { read -r key && read -r key value; } 2>/dev/null </proc/$$/status
  [[ $key == Umask: ]] && { REPLY=$value; return 0; }
  while read -r key value; do
    [[ $key == Umask: ]] && { REPLY=$value; return 0; }
  done 2>/dev/null </proc/$$/status
}

# _tmux_run_prompt: the PROMPT_COMMAND hook, last in it; keeps $? for the prompt. While the helper
# starts (no word yet, for less than 10 seconds since the first prompt): the hooks in place
# (_tmux_run_hooks) and the shell marked idle; else what the rest does at a prompt
# (_tmux_run_prompt_served, which also reports the mode).
_tmux_run_prompt() {
  local rc=$? now=
  if [[ -z $_tmux_run_served && -n ${_tmux_run_base-} && -z ${_tmux_run_ended-} && ! -e $_tmux_run_base.msg ]] &&
    kill -0 "${_tmux_run_helper_pid-}" 2>/dev/null; then
    ((_tmux_run_prompts)) && _tmux_run_clock now
    if ((${now:-0} - _tmux_run_since < 10)); then
      ((_tmux_run_prompts++)) || _tmux_run_clock _tmux_run_since
      { trap -p DEBUG; printf '\0'; } 2>/dev/null 1<>"$_tmux_run_base.trap"
      _tmux_run_hooks
      _tmux_run_idle=1
      return $rc
    fi
  fi
  _tmux_run_serve && _tmux_run_prompt_served
  return $rc
}
declare -ft _tmux_run_prompt

# _tmux_run_trap_of SIGNAL: sets REPLY to the action of the shell's trap for SIGNAL ('' if none),
# read back from `trap -p` through the channel's own 0600 file, without a fork. BASE.trap is written
# over, not truncated (`1<>`), and ends at a NUL that `read -d ''` stops at: a truncation costs
# ~0.2 ms a write on an ext4 /tmp (timed; a tmpfs ~0.03), a write over it ~0.02 (BENCHMARKS.md).
_tmux_run_trap_of() {
  local text=
  REPLY=
  { trap -p "$1"; printf '\0'; } 2>/dev/null 1<>"$_tmux_run_base.trap" || return 0
  read -r -d '' text 2>/dev/null <"$_tmux_run_base.trap"
  [[ $text == "trap -- "* ]] && eval "_tmux_run_grab ${text#trap }"
}
_tmux_run_grab() { REPLY=${2-}; }

# The WINCH trap's prefix while enrolled (no reserved word: bash 5.2 fails to parse `{ ...; }` in a
# trap run while readline reads a continuation line); yours follows on the next line. The DEBUG
# trap while enrolled: yours, skipped while idle at the prompt (a trap's first command fires DEBUG
# too: bash-preexec must not take the handler for your command) and in the snippet's functions.
_tmux_run_winch_prefix=_tmux_run_on_winch
_tmux_run_debug_head='case ${_tmux_run_idle-}:${FUNCNAME-} in 1:* | *:_tmux_run_*) ;; *) '
_tmux_run_debug_tail=$'\n;; esac # tmux-run'

# _tmux_run_hooks: at each prompt, puts back what the person or a framework replaced: the DEBUG
# guard (the DEBUG trap _tmux_run_prompt left in BASE.trap: only a traced function sees it), the
# WINCH trap, PS0 and PS2; bash-preexec loaded after the snippet: the hook moves into its
# precmd_functions, at the very prompt where it installs itself (_tmux_run_hook_prompt).
_tmux_run_hooks() {
  local REPLY= text=
  if [[ -s $_tmux_run_base.trap ]]; then
    read -r -d '' text 2>/dev/null <"$_tmux_run_base.trap"
    [[ $text == "trap -- "* ]] && eval "_tmux_run_grab ${text#trap }"
    if [[ -n $REPLY && $REPLY != "$_tmux_run_debug_head"* ]]; then
      _tmux_run_debug_user=$REPLY
      trap -- "$_tmux_run_debug_head$REPLY$_tmux_run_debug_tail" DEBUG
    fi
  fi
  _tmux_run_trap_of WINCH
  [[ $REPLY == "$_tmux_run_winch_prefix"* ]] || trap -- "$_tmux_run_winch_prefix${REPLY:+$'\n'$REPLY}" WINCH
  [[ -n ${bash_preexec_imported-}${__bp_imported-} && " ${precmd_functions[*]-} " != *" _tmux_run_prompt "* ]] &&
    declare -F __bp_precmd_invoke_cmd >/dev/null && _tmux_run_serve && _tmux_run_hook_prompt add
  [[ ${PS0-} == *"$_tmux_run_ps0"* ]] || PS0=$_tmux_run_ps0${PS0-}
  [[ ${PS2-} == *"$_tmux_run_ps2"* ]] || PS2=$_tmux_run_ps2${PS2-}
  return 0
}

# _tmux_run_serve: reads the rest (shell/tmux-run-serve.bash), once. Returns 1, with what to say in
# _tmux_run_said (at the next prompt), when it cannot be read.
_tmux_run_serve() {
  [[ -n ${_tmux_run_served-} ]] && return 0
  local f=$_tmux_run_root/shell/tmux-run-serve.bash
  if [[ ! -r $f ]] || ! source "$f"; then
    _tmux_run_said="tmux-run: $f cannot be read; this pane cannot be served (reinstall tmux-run)"
    return 1
  fi
  _tmux_run_served=1
}

# _tmux_run_on_winch: the WINCH trap until the helper's first word (BASE.msg): then the rest is
# read, whose _tmux_run_on_winch replaces this one.
_tmux_run_on_winch() {
  [[ -n ${_tmux_run_base-} && -e $_tmux_run_base.msg ]] || return 0
  _tmux_run_serve && _tmux_run_on_winch
}

# tmux_run_unenroll: ends this pane's enrollment (the rest has it).
tmux_run_unenroll() {
  _tmux_run_serve && tmux_run_unenroll "$@" && return 0
  [[ -n ${_tmux_run_said-} ]] && printf '%s\n' "$_tmux_run_said" >&2
  _tmux_run_said=
  return 1
}

[[ $_tmux_run_aliases == on ]] && shopt -s expand_aliases
unset _tmux_run_aliases
_tmux_run_enroll
