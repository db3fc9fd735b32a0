# tmux-run.zsh: enroll this zsh pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.zsh     # enroll (again: harmless)
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# Nothing is ever typed into this terminal. A small helper process answers the broker; it asks
# this shell, through zle's own descriptor handler, whether the line editor is idle and empty,
# and for the current directory and exported environment. Set TMUX_RUN_NOTIFY=off to hide the
# notices drawn when a run starts and ends.
#
# Set TMUX_RUN_APPROVE=ask (a shell parameter, read at each run) to be asked before each run:
# y runs it, a runs it and stops asking for that exact script while this pane stays enrolled,
# any other key refuses; no key within TMUX_RUN_APPROVE_TIMEOUT seconds (default 120) refuses.
#
# Sourcing defines only names that start with tmux_run_ or _tmux_run_, adds one function to
# precmd_functions while enrolled, and changes none of the shell's options.

# Refuse early in shells that are not zsh; this part must parse in any POSIX shell.
if [ -z "${ZSH_VERSION-}" ]; then
  echo "tmux-run: not enrolled: this shell is not zsh; tmux-run needs an interactive zsh 5.9 or newer" >&2
  return 1 2>/dev/null || exit 1
fi

# The person's aliases must not change the functions below: define them with alias expansion
# off, then put the option back exactly as it was.
typeset -g _tmux_run_aliases=${options[aliases]}
setopt no_aliases

typeset -g _tmux_run_snippet=${${(%):-%x}:A}

# _tmux_run_enroll: checks everything, starts the helper and returns without waiting for it: the
# helper's first line (R when enrolled, E with the reason when not) arrives through the line
# editor (_tmux_run_on_request), and a helper that dies first is noticed there (the end of file on
# the request FIFO) or at the next prompt (_tmux_run_precmd). Until then the pane is not listed.
# Returns 0 when the helper was started (or the shell is enrolled already), 1 with one line on
# stderr otherwise; a refusal leaves nothing behind (no file in the directory, no helper process).
_tmux_run_enroll() {
  emulate -L zsh
  setopt local_options no_bg_nice extended_glob
  local -a v=( ${(s:.:)ZSH_VERSION} )
  if (( ${v[1]:-0} < 5 || ( ${v[1]:-0} == 5 && ${v[2]:-0} < 9 ) )); then
    print -ru2 -- "tmux-run: not enrolled: zsh $ZSH_VERSION is too old; zsh 5.9 or newer is required"
    return 1
  fi
  if [[ ! -o interactive ]]; then
    print -ru2 -- "tmux-run: not enrolled: this zsh is not interactive"
    return 1
  fi
  if (( ${+ZSH_EXECUTION_STRING} || ${+ZSH_SCRIPT} )); then
    print -ru2 -- "tmux-run: not enrolled: this zsh runs a command string or a script (zsh -c, zsh FILE) and never waits at a prompt"
    return 1
  fi
  if [[ ! -o zle ]]; then
    print -ru2 -- "tmux-run: not enrolled: zsh's line editor is off (setopt zle, and use a terminal that is not dumb)"
    return 1
  fi
  # At the far end of a `tmux-run ssh` session (shell/remote/tmux-run-remote.zsh), the pane is the local one.
  if [[ -z $_tmux_run_remote ]] && [[ -z $TMUX || -z $TMUX_PANE ]]; then
    print -ru2 -- "tmux-run: not enrolled: this shell is not running inside tmux (TMUX and TMUX_PANE are unset)"
    return 1
  fi
  # Its start waits for the first prompt (sourced twice in start-up files, say): it goes on, silently.
  [[ -n $_tmux_run_deferred ]] && return 0
  if [[ -n $_tmux_run_dormant || -n $_tmux_run_waking ]]; then
    local REPLY
    _tmux_run_pane_name
    print -ru2 -- "tmux-run: $REPLY is already enrolled (generation $_tmux_run_generation; its helper is dormant until a run needs it)"
    return 0
  fi
  if [[ -n $_tmux_run_helper_pid ]] && kill -0 $_tmux_run_helper_pid 2>/dev/null; then
    # Still starting (sourced twice in start-up files, say): that start goes on, silently.
    local REPLY
    _tmux_run_pane_name
    [[ -n $_tmux_run_generation ]] && print -ru2 -- "tmux-run: $REPLY is already enrolled (generation $_tmux_run_generation)"
    return 0
  fi
  # Its helper died unnoticed (no prompt since): say so first, as a prompt would have.
  if [[ -n $_tmux_run_helper_pid && -n $_tmux_run_generation ]]; then _tmux_run_lost
  elif [[ -n $_tmux_run_helper_pid ]]; then _tmux_run_starting
  fi

  zmodload -F zsh/system b:sysopen b:sysread b:syswrite 2>/dev/null
  zmodload -F zsh/stat b:zstat 2>/dev/null
  zmodload -F zsh/files b:zf_mkdir b:zf_rm 2>/dev/null
  zmodload -F zsh/zselect b:zselect 2>/dev/null
  if (( ! ${+builtins[sysopen]} || ! ${+builtins[zstat]} || ! ${+builtins[zf_rm]} || ! ${+builtins[zselect]} )); then
    print -ru2 -- "tmux-run: not enrolled: zsh modules zsh/system, zsh/stat, zsh/files and zsh/zselect are needed"
    return 1
  fi

  local REPLY dir
  _tmux_run_dir; dir=$REPLY
  if [[ $dir != /* ]]; then
    print -ru2 -- "tmux-run: not enrolled: the directory $dir is not an absolute path; set TMUX_RUN_DIR to one"
    return 1
  fi
  [[ -e $dir || -L $dir ]] || zf_mkdir -m 700 -- $dir 2>/dev/null
  local -A st
  if ! zstat -L -H st -- $dir 2>/dev/null; then
    print -ru2 -- "tmux-run: not enrolled: cannot create the directory $dir"
    return 1
  fi
  if [[ -L $dir ]]; then
    print -ru2 -- "tmux-run: not enrolled: $dir is a symlink; refusing to use it (remove it or set TMUX_RUN_DIR)"
    return 1
  fi
  if [[ ! -d $dir ]]; then
    print -ru2 -- "tmux-run: not enrolled: $dir is not a directory (remove it or set TMUX_RUN_DIR)"
    return 1
  fi
  if (( st[uid] != EUID )); then
    print -ru2 -- "tmux-run: not enrolled: $dir belongs to uid $st[uid], not to you (uid $EUID); remove it or set TMUX_RUN_DIR"
    return 1
  fi
  if (( (st[mode] & 8#077) != 0 )); then
    print -ru2 -- "tmux-run: not enrolled: $dir is open to other users (mode $(( [##8] st[mode] & 8#7777 ))); run: chmod 700 '$dir'"
    return 1
  fi

  local main=${_tmux_run_snippet:h:h}/dist/helper/main.js
  if [[ ! -r $main ]]; then
    print -ru2 -- "tmux-run: not enrolled: the helper $main is missing; run 'npm install' in ${_tmux_run_snippet:h:h}"
    return 1
  fi
  local node=${TMUX_RUN_NODE:-node}
  if (( ! $+commands[$node] )) && [[ $node != */* || ! -f $node || ! -x $node ]]; then
    if [[ -n ${TMUX_RUN_NODE-} ]]; then
      print -ru2 -- "tmux-run: not enrolled: TMUX_RUN_NODE=$node is not a program that can be run (set it to node's absolute path, or unset it to use node on PATH)"
    else
      print -ru2 -- "tmux-run: not enrolled: node was not found on PATH (set TMUX_RUN_NODE to its path)"
    fi
    return 1
  fi

  # What an earlier enrollment of this shell (this pid) left: the log of a helper that failed.
  zf_rm -f -- $dir/ch.$$.<->.*(N) 2>/dev/null
  local base=$dir/ch.$$.$RANDOM$RANDOM
  # Sourced from a start-up file (.zshrc: no command read at a prompt yet), the helper starts once
  # the line editor first waits for a key, that is once the first prompt is drawn, so that Node's
  # start does not compete with the shell's own (nor with the plugins' first work). Sourced at a
  # prompt, it starts at once.
  if [[ ${zsh_eval_context[1]} != toplevel ]] && _tmux_run_defer $base $node $main; then
    return 0
  fi
  _tmux_run_spawn $base $node $main
}

# _tmux_run_defer BASE NODE MAIN: the helper's start waits for the line editor: a zle -F handler
# on /dev/null (always readable) runs as soon as zle waits for input, after the first prompt is
# drawn. ^C meanwhile abandons the enrollment, as during the start itself. Returns 1 when it
# cannot wait (the start then happens at once).
_tmux_run_defer() {
  emulate -L zsh
  local fd=
  sysopen -r -o cloexec -u fd -- /dev/null 2>/dev/null || return 1
  typeset -g _tmux_run_deferred=$fd _tmux_run_base=$1 _tmux_run_node=$2 _tmux_run_main=$3
  zle -N _tmux_run_deferred_start
  zle -F -w $fd _tmux_run_deferred_start
  _tmux_run_trap_int
  return 0
}

# _tmux_run_deferred_start: the zle -F widget of _tmux_run_defer, called once: the first prompt is
# drawn, the helper starts now (a failure is said above the prompt, once).
_tmux_run_deferred_start() {
  emulate -L zsh
  local base=$_tmux_run_base node=$_tmux_run_node main=$_tmux_run_main
  _tmux_run_undefer
  _tmux_run_spawn $base $node $main && return 0
  _tmux_run_untrap_int
  unset _tmux_run_base _tmux_run_node
  return 0
}

# _tmux_run_undefer: a start that waited is no longer waiting (it starts, or the enrollment ends).
_tmux_run_undefer() {
  emulate -L zsh
  [[ -n $_tmux_run_deferred ]] || return 0
  zle -F $_tmux_run_deferred 2>/dev/null
  { exec {_tmux_run_deferred}<&- } 2>/dev/null
  unset _tmux_run_deferred _tmux_run_main
  return 0
}

# _tmux_run_spawn BASE NODE MAIN: makes the shell channel (two FIFOs), starts the helper, and
# registers the handler and hooks. Returns 0 when the helper was started, 1 (said) otherwise.
_tmux_run_spawn() {
  emulate -L zsh
  setopt local_options no_bg_nice extended_glob
  local base=$1 node=$2 main=$3 dir=${1:h}
  if ! command mkfifo -m 600 -- $base.req $base.rsp 2>/dev/null; then
    zf_rm -f -- $base.req $base.rsp 2>/dev/null
    _tmux_run_say "tmux-run: not enrolled: cannot create the shell channel in $dir"
    return 1
  fi
  local req= rsp=
  # Both FIFOs are opened without blocking and close-on-exec (never inherited by the commands the
  # person runs). The shell only reads the request FIFO: once the helper, and the descriptor it
  # is started with, are gone, the line editor sees its end (the helper died, even before a word).
  if ! sysopen -r -o cloexec,nonblock -u req -- $base.req 2>/dev/null || ! sysopen -rw -o cloexec -u rsp -- $base.rsp 2>/dev/null; then
    [[ -n $req ]] && exec {req}<&-
    [[ -n $rsp ]] && exec {rsp}<&-
    zf_rm -f -- $base.req $base.rsp $base.log 2>/dev/null
    _tmux_run_say "tmux-run: not enrolled: cannot open the shell channel in $dir"
    return 1
  fi

  # The helper starts in a child of its own (its own process group: ^C at the prompt is not for
  # it), which makes its log (0600) and gives it its descriptors before it becomes node:
  # descriptor 9 is the request FIFO's write end, the helper's from its first instant (it swaps it
  # for a close-on-exec one of its own at once), so that a node that dies unheard is heard; the log
  # takes its stdout and stderr.
  # The person's NODE_OPTIONS (--inspect, --require) are not for the helper. The helper lives as
  # long as the pane and its JavaScript runs well under a millisecond per run: --no-opt and
  # --optimize-for-size give up speed it does not need for about 8 MB resident. glibc's malloc
  # hands freed blocks of 32 KB and more back at once (Node reads pipes into 64 KB buffers, which
  # otherwise stay resident after a run with a lot of output) and keeps two arenas. Scripts never
  # see these variables: they run with the shell's own environment, sent at dispatch.
  { _tmux_run_launch $base $node $main 9>>$base.req } &!
  local hpid=$!

  typeset -g _tmux_run_helper_pid=$hpid _tmux_run_req_fd=$req _tmux_run_rsp_fd=$rsp
  typeset -g _tmux_run_base=$base _tmux_run_generation= _tmux_run_enrollment= _tmux_run_inbuf=
  typeset -g _tmux_run_node=$node
  # When the helper started (seconds): one that says nothing for 10 seconds is stopped.
  typeset -g _tmux_run_since=${(%):-"%D{%s}"}
  # Ask mode: the digests the person answered `a` for (private, never exported), the question
  # being asked (its nonce), and the mode last reported to the helper.
  typeset -gA _tmux_run_always=()
  typeset -g _tmux_run_asking= _tmux_run_mode_sent=
  zle -N _tmux_run_on_request
  zle -F -w $req _tmux_run_on_request
  precmd_functions=(${precmd_functions:#_tmux_run_precmd} _tmux_run_precmd)
  _tmux_run_trap_int
  return 0
}

# _tmux_run_launch BASE NODE MAIN: the helper's start, in the child that becomes it (descriptor 9,
# the request FIFO's write end, given by the caller): umask 077, the memory settings above, the
# person's TMUX_RUN_IDLE passed on (exported or not), then node in place of the child.
_tmux_run_launch() {
  umask 077
  export NODE_OPTIONS= MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768
  (( ${+TMUX_RUN_IDLE} )) && export TMUX_RUN_IDLE
  [[ -n $_tmux_run_remote ]] && export TMUX_RUN_REMOTE=$_tmux_run_remote
  exec $2 --max-semi-space-size=1 --max-old-space-size=32 --no-opt --optimize-for-size --expose-gc -- $3 $1 $$ \
    </dev/null >>$1.log 2>&1
}

# _tmux_run_trap_int: while the helper starts, ^C (in the rest of .zshrc, or at the prompt)
# abandons the enrollment, as it did when source waited: a TRAPINT that stops the helper, undoes
# everything and then lets the interrupt do what it would have done. Only when the person has no
# INT trap of their own (a TRAPINT function, or one set with `trap`): theirs is never replaced.
_tmux_run_trap_int() {
  emulate -L zsh
  # (Not local: the trap outlives this function and source; none is saved to be restored.)
  setopt local_options no_local_traps
  (( ${+functions[TRAPINT]} )) && return 0
  # `trap` lists the traps set with it; written to a private file (0600, whatever the umask) and
  # read back, with no fork.
  local list=$_tmux_run_base.trap fd=
  zf_rm -f -- $list 2>/dev/null
  sysopen -w -o cloexec,creat,excl,nofollow -m 600 -u fd -- $list 2>/dev/null || return 0
  { trap >&$fd } 2>/dev/null
  { exec {fd}>&- } 2>/dev/null
  local traps=$(<$list)
  zf_rm -f -- $list 2>/dev/null
  [[ $traps == *' INT'(|$'\n'*) ]] && return 0
  functions[TRAPINT]='_tmux_run_interrupted; return $(( 128 + $1 ))'
  typeset -g _tmux_run_trapped=1
}

# _tmux_run_untrap_int: removes the TRAPINT that _tmux_run_trap_int set (the helper answered, or
# the enrollment ended), leaving any other alone.
_tmux_run_untrap_int() {
  emulate -L zsh
  setopt local_options no_local_traps
  [[ -n $_tmux_run_trapped ]] || return 0
  unset _tmux_run_trapped
  [[ ${functions[TRAPINT]-} == *_tmux_run_interrupted* ]] && unfunction TRAPINT
  return 0
}

# _tmux_run_interrupted: ^C while the helper starts: the enrollment is abandoned, leaving nothing.
_tmux_run_interrupted() {
  emulate -L zsh
  _tmux_run_untrap_int
  if [[ -n $_tmux_run_deferred ]]; then
    _tmux_run_teardown
    _tmux_run_say "tmux-run: not enrolled: interrupted while the helper was starting"
    return 0
  fi
  [[ -n $_tmux_run_helper_pid && -z $_tmux_run_generation ]] || return 0
  local pid=$_tmux_run_helper_pid
  kill -TERM $pid 2>/dev/null
  _tmux_run_teardown
  _tmux_run_stop $pid
  _tmux_run_say "tmux-run: not enrolled: interrupted while the helper was starting"
}

# _tmux_run_started LINE: the helper's first line while the shell waits for it: R GENERATION
# ENROLLMENT (enrolled) or E REASON (it failed: said once, with the log kept). Returns 1 when the
# enrollment ended. A second first line is ignored.
_tmux_run_started() {
  emulate -L zsh
  setopt local_options extended_glob
  [[ -n $_tmux_run_generation ]] && return 0
  _tmux_run_untrap_int
  local line=$1 generation enrollment reason
  if [[ $line == R\ * ]]; then
    generation=${${line#R }%% *} enrollment=${${line#R }#* }
    if [[ $generation == [0-9a-f](#c32) && $enrollment == [0-9a-f](#c32) ]]; then
      typeset -g _tmux_run_generation=$generation _tmux_run_enrollment=$enrollment
      # Report the mode at once, as a prompt would.
      _tmux_run_precmd
      return 0
    fi
    reason="the helper answered in a way this snippet does not understand"
  else
    reason=${line#E }
  fi
  _tmux_run_failed $reason
  return 1
}

# _tmux_run_failed REASON [WHAT]: the helper could not enroll this shell (or, WHAT said, be started
# again for it): stops it, undoes the enrollment but keeps the helper's log, and says why, once.
_tmux_run_failed() {
  emulate -L zsh
  local log=$_tmux_run_base.log
  _tmux_run_stop $_tmux_run_helper_pid
  _tmux_run_teardown keep-log
  [[ -s $log ]] || { zf_rm -f -- $log 2>/dev/null; log= }
  _tmux_run_say "tmux-run: ${2:-not enrolled}: $1${log:+ (the helper's log: $log)}"
}

# _tmux_run_exited: the helper is gone before its first line: the reason is in its log.
_tmux_run_exited() {
  emulate -L zsh
  local REPLY
  _tmux_run_log_reason $_tmux_run_base.log
  # At the far end, a login that is not a `tmux-run ssh` session: nothing to enroll, nothing to say.
  if [[ -n $_tmux_run_remote && $REPLY == 'not a tmux-run ssh session'* ]]; then
    _tmux_run_untrap_int
    _tmux_run_teardown
    return 0
  fi
  _tmux_run_failed "the helper exited before it was ready: $REPLY"
}

# _tmux_run_say TEXT: shows TEXT once, on its own line: printed before the prompt, or, from the
# line editor, printed above a prompt and line that zle then redraws intact.
_tmux_run_say() {
  emulate -L zsh
  zle && zle -I
  print -ru2 -- "$1"
}

# _tmux_run_pane_name: sets REPLY to how messages name this pane: its tmux id, or at the far end
# of a `tmux-run ssh` session (no tmux of the pane's here) the session's pane.
_tmux_run_pane_name() {
  if [[ -n $_tmux_run_remote ]]; then REPLY="the pane of this ssh session"; else REPLY="pane $TMUX_PANE"; fi
}

# _tmux_run_dir: sets REPLY to the registry directory: TMUX_RUN_DIR, else
# $XDG_RUNTIME_DIR/tmux-run, else /run/user/UID/tmux-run when that runtime directory is a real
# directory of this user's, else /tmp/tmux-run-UID (as src/core/enrollment/layout.ts decides).
_tmux_run_dir() {
  emulate -L zsh
  if [[ -n $TMUX_RUN_DIR ]]; then REPLY=$TMUX_RUN_DIR
  elif [[ -n $XDG_RUNTIME_DIR ]]; then REPLY=$XDG_RUNTIME_DIR/tmux-run
  elif [[ -d /run/user/$EUID && ! -L /run/user/$EUID && -O /run/user/$EUID ]]; then REPLY=/run/user/$EUID/tmux-run
  else REPLY=/tmp/tmux-run-$EUID
  fi
}

# _tmux_run_log_reason LOG: sets REPLY to the line of a helper's log that best says why it stopped
# (without a fork: this runs inside the line editor too).
_tmux_run_log_reason() {
  emulate -L zsh
  setopt local_options extended_glob
  local -a lines
  [[ -r $1 ]] && lines=( ${(f)"$(<$1)"} ) 2>/dev/null
  lines=( ${lines:#[[:space:]]#} )
  local pick=${${(M)lines:#*(enrollment failed|fatal|Error|error)*}[-1]:-${lines[-1]}}
  pick=${pick#*tmux-run-helper\[<->\]: }
  [[ -n $pick ]] || pick="it printed nothing"
  REPLY=${pick[1,300]}
}

# _tmux_run_stop PID: ends a helper that must go, and waits until it has: it gets 4 seconds to
# let a run it was serving report its end (it allows itself 3), then it is killed.
_tmux_run_stop() {
  emulate -L zsh
  local pid=$1
  integer i=0
  kill -0 $pid 2>/dev/null || return 0
  kill -TERM $pid 2>/dev/null
  while kill -0 $pid 2>/dev/null && (( i++ < 80 )); do zselect -t 5; done
  kill -0 $pid 2>/dev/null && kill -KILL $pid 2>/dev/null
  i=0
  while kill -0 $pid 2>/dev/null && (( i++ < 20 )); do zselect -t 5; done
  return 0
}

# _tmux_run_on_request: the zle -F widget; reads the helper's lines and answers each.
# R/E: the helper's first line (_tmux_run_started). Q NONCE: answer K NONCE after writing cwd and
# exported environment, or B NONCE REASON; in ask mode, ask the person first (_tmux_run_approve).
# N TEXT: draw a notice with zle -M. S TEXT: say it once, notices on or off. D: the helper goes
# dormant; U: a broker wakes it (below, "Dormant helpers"). X: the enrollment was revoked. The end of the FIFO: the helper
# is gone. While a question is up, zle calls this widget again from inside the question's
# `read -k`: it then only collects the lines, and the question reads what is its own.
_tmux_run_on_request() {
  emulate -L zsh
  local _tmux_run_chunk _tmux_run_line
  integer _tmux_run_rc
  sysread -t 0 -i $_tmux_run_req_fd _tmux_run_chunk 2>/dev/null; _tmux_run_rc=$?
  (( _tmux_run_rc == 4 )) && return 0
  if (( _tmux_run_rc != 0 )); then
    # Nothing to read ever again: stop watching it. A helper gone before its first line is said
    # now; an enrolled one at the next prompt (_tmux_run_precmd), as a question up notices itself.
    zle -F $_tmux_run_req_fd 2>/dev/null
    [[ -n $_tmux_run_waking ]] && { _tmux_run_wake_gone; return 0 }
    [[ -z $_tmux_run_generation && -z $_tmux_run_asking ]] && _tmux_run_exited
    return 0
  fi
  _tmux_run_inbuf+=$_tmux_run_chunk
  [[ -n $_tmux_run_asking ]] && return 0
  # The notices of this call, drawn once at the end: zsh 5.9 draws a second zle -M of one widget
  # call over the prompt's line (a run's start and end notices often come in one read).
  local -a _tmux_run_notes
  while [[ $_tmux_run_inbuf == *$'\n'* ]]; do
    _tmux_run_line=${_tmux_run_inbuf%%$'\n'*}; _tmux_run_inbuf=${_tmux_run_inbuf#*$'\n'}
    case $_tmux_run_line in
      (R\ *|E\ *)
        if [[ -n $_tmux_run_waking ]]; then _tmux_run_woken $_tmux_run_line || return 0
        else _tmux_run_started $_tmux_run_line || return 0
        fi ;;
      (D) _tmux_run_sleep ;;
      (U) _tmux_run_wake ;;
      (Q\ *) _tmux_run_answer ${_tmux_run_line#Q } ;;
      (N\ *) _tmux_run_notes+=("${_tmux_run_line#N }") ;;
      (S\ *) _tmux_run_say "${_tmux_run_line#S }" ;;
      (X*)
        _tmux_run_teardown
        _tmux_run_notes+=("tmux-run: this pane's enrollment was revoked")
        break ;;
    esac
  done
  (( $#_tmux_run_notes > 3 )) && _tmux_run_notes=("${(@)_tmux_run_notes[-3,-1]}")
  (( $#_tmux_run_notes )) && [[ $TMUX_RUN_NOTIFY != (off|0|no|false) ]] && zle -M -- "${(pj:\n:)_tmux_run_notes}"
  return 0
}

# _tmux_run_answer NONCE: tells the helper whether the editor is idle and empty; if so, and the
# shell does not ask (TMUX_RUN_APPROVE unset, empty or auto), writes the snapshot and answers K.
_tmux_run_answer() {
  local _tmux_run_nonce=$1 _tmux_run_reason=
  if [[ -n $BUFFER || -n $PREBUFFER ]]; then _tmux_run_reason=editor_not_empty
  elif [[ $CONTEXT != start ]]; then _tmux_run_reason=context:$CONTEXT
  elif (( ${PENDING:-0} > 0 )); then _tmux_run_reason=pending_input
  fi
  if [[ -n $_tmux_run_reason ]]; then
    print -rn -u $_tmux_run_rsp_fd -- "B $_tmux_run_nonce $_tmux_run_reason"$'\n'
    return 0
  fi
  # (A sandbox value the helper does not know is refused by it, sandbox_unavailable: nothing to ask.)
  if [[ -n $TMUX_RUN_APPROVE && $TMUX_RUN_APPROVE != auto && ${TMUX_RUN_SANDBOX:-off} == (off|workspace|workspace+net|read-only) ]]; then
    _tmux_run_approve $_tmux_run_nonce
  elif _tmux_run_snapshot $_tmux_run_nonce; then
    print -rn -u $_tmux_run_rsp_fd -- "K $_tmux_run_nonce"$'\n'
  else
    print -rn -u $_tmux_run_rsp_fd -- "B $_tmux_run_nonce snapshot_failed"$'\n'
  fi
}

# _tmux_run_snapshot NONCE: writes NONCE, PWD and the exported environment (NUL-separated) to
# the snapshot file the helper reads; returns 1 when the file cannot be made. When TMUX_RUN_SANDBOX
# is set and not off, also the parameters the sandbox reads, exported or not, as :NAME=VALUE
# entries (no parameter name starts with a colon); an array is joined with colons.
_tmux_run_snapshot() {
  # Every name local here and in its callers (_tmux_run_on_request, _tmux_run_answer) starts with
  # _tmux_run_: zsh's locals are seen by the functions they call, and a local named like a
  # variable the person exported would hide it from the snapshot. (In ask mode the question's own
  # locals still do: nonce, limit, note, chunk, rest, run, digest, bytes, nlines, notify, msg,
  # answer, sandbox, sep, l, key, c, typed, client, text, shown, more, end, wait_end and REPLY.)
  local -a _tmux_run_kv
  local _tmux_run_n _tmux_run_fd
  for _tmux_run_n in ${(k)parameters[(R)*export*]}; do
    _tmux_run_kv+=("$_tmux_run_n=${(P)_tmux_run_n}")
  done
  if [[ -n ${TMUX_RUN_SANDBOX-} && $TMUX_RUN_SANDBOX != off ]]; then
    for _tmux_run_n in TMUX_RUN_SANDBOX TMUX_RUN_SANDBOX_WRITE TMUX_RUN_SANDBOX_HIDE HOME ZDOTDIR XDG_CONFIG_HOME \
        XDG_RUNTIME_DIR SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS TMUX TMUX_TMPDIR; do
      (( ${+parameters[$_tmux_run_n]} )) && _tmux_run_kv+=(":$_tmux_run_n=${(j.:.)${(@P)_tmux_run_n}}")
    done
  fi
  # A new file each time: truncating the last one in place costs ext4 about 0.2 ms a run,
  # removing it a tenth of that. (Anything but a plain file there still fails the open.)
  [[ -f $_tmux_run_base.env && ! -L $_tmux_run_base.env ]] && zf_rm -f -- $_tmux_run_base.env 2>/dev/null
  sysopen -w -o cloexec,creat,excl,nofollow -m 600 -u _tmux_run_fd -- $_tmux_run_base.env 2>/dev/null || return 1
  print -rn -u $_tmux_run_fd -- "$1"$'\0'"$PWD"$'\0'"${(pj:\0:)_tmux_run_kv}"
  exec {_tmux_run_fd}>&-
  return 0
}

# _tmux_run_take PREFIX: takes the first whole line starting with PREFIX out of the lines read
# from the helper; sets REPLY to it. Returns 1 when there is none (yet).
_tmux_run_take() {
  emulate -L zsh
  local buf=$'\n'$_tmux_run_inbuf
  [[ $buf == *$'\n'$1* ]] || return 1
  local head=${buf%%$'\n'$1*} rest=${buf#*$'\n'$1}
  [[ $rest == *$'\n'* ]] || return 1
  REPLY=$1${rest%%$'\n'*}
  rest=${rest#*$'\n'}
  head=${head#$'\n'}
  _tmux_run_inbuf=${head:+$head$'\n'}$rest
  return 0
}

# _tmux_run_fit TEXT: TEXT cut to the terminal's width (less one column), in REPLY.
_tmux_run_fit() {
  emulate -L zsh
  local s=$1
  integer w=$(( ${COLUMNS:-80} > 20 ? ${COLUMNS:-80} - 1 : 19 ))
  if (( ${(m)#s} > w )); then
    s=${s[1,w]}
    while (( ${#s} > 0 && ${(m)#s} > w - 3 )); do s=${s[1,-2]}; done
    s+=...
  fi
  REPLY=$s
}

# _tmux_run_approve NONCE: ask mode. Tells the helper at once that the person is asked (so the
# wait is theirs, not a busy editor's), receives the run's details, shows them with zle and reads
# one key: y runs, a runs and remembers the digest, anything else refuses; no key within
# TMUX_RUN_APPROVE_TIMEOUT seconds refuses; a W from the helper (the run was cancelled) withdraws
# the question. Keys typed just before the question are kept and given back to the editor after.
_tmux_run_approve() {
  emulate -L zsh
  setopt local_options local_traps extended_glob
  local nonce=$1 limit=${TMUX_RUN_APPROVE_TIMEOUT:-120} note= REPLY chunk
  if [[ $limit != <1-86400> ]]; then
    note="(TMUX_RUN_APPROVE_TIMEOUT=${(V)${TMUX_RUN_APPROVE_TIMEOUT[1,20]}} is not a whole number of seconds from 1 to 86400; using 120)"
    limit=120
  fi
  limit=$(( 10#$limit ))
  # The helper gave up on this question already (the answer came too late): drop it.
  _tmux_run_take "W $nonce" && return 0
  print -rn -u $_tmux_run_rsp_fd -- "A $nonce $limit"$'\n'
  # The time in seconds with milliseconds, without a fork or a module (which would add names).
  local -F wait_end=$(( ${(%):-"%D{%s.%.}"} + 2 ))
  until _tmux_run_take "P $nonce "; do
    _tmux_run_withdrawn $nonce && return 0
    (( ${(%):-"%D{%s.%.}"} < wait_end )) || return 0
    sysread -t 0.05 -i $_tmux_run_req_fd chunk 2>/dev/null && _tmux_run_inbuf+=$chunk
  done
  local rest=${REPLY#P $nonce }
  local run=${rest%% *}; rest=${rest#* }
  local digest=${rest%% *}; rest=${rest#* }
  local bytes=${rest%% *}; rest=${rest#* }
  local nlines=${rest%% *}; rest=${rest#* }
  if [[ $run != [0-9a-f](#c32) || $digest != [0-9a-f](#c64) || $bytes != <-> || $nlines != <-> ]]; then
    print -rn -u $_tmux_run_rsp_fd -- "B $nonce bad_details"$'\n'
    return 0
  fi
  local notify=1 msg= answer=
  [[ $TMUX_RUN_NOTIFY == (off|0|no|false) ]] && notify=
  if (( ${+_tmux_run_always[$digest]} )); then
    if _tmux_run_snapshot $nonce; then
      print -rn -u $_tmux_run_rsp_fd -- "K $nonce always"$'\n'
      [[ -n $notify ]] && zle -M -- "tmux-run: run ${run[1,8]} approved without asking (you chose [a]lways for script sha256 ${digest[1,12]})"
    else
      print -rn -u $_tmux_run_rsp_fd -- "B $nonce snapshot_failed"$'\n'
    fi
    return 0
  fi

  # The question: what runs (escaped by the helper; anything odd left is shown as ?), cut to width.
  local sep=$'\x1f' l key c typed= client= _tmux_run_in=
  local -a text shown
  integer more
  # The run's input, last when it takes input (the helper's words), then who asked, after the
  # preview when the client named itself (escaped by the helper): a label.
  if [[ $rest == *$'\x1d'* ]]; then _tmux_run_in=${rest##*$'\x1d'} rest=${rest%$'\x1d'*}; fi
  if [[ $rest == *$'\x1e'* ]]; then client=${rest##*$'\x1e'} rest=${rest%$'\x1e'*}; fi
  shown=( "${(@ps:$sep:)rest}" )
  _tmux_run_fit "tmux-run: an agent${client:+ (${client//[[:cntrl:]]/?})} asks to run a script in this shell (TMUX_RUN_APPROVE=ask)"; text+=( $REPLY )
  _tmux_run_fit "  run ${run[1,8]}  sha256 ${digest[1,12]}  $bytes bytes, $nlines line${${nlines:#1}:+s}:"; text+=( $REPLY )
  for l in "${shown[@]}"; do
    _tmux_run_fit "  | ${l//[[:cntrl:]]/?}"; text+=( $REPLY )
  done
  more=$(( nlines - $#shown ))
  (( more > 0 )) && { _tmux_run_fit "  ($more more line${${more:#1}:+s} not shown)"; text+=( $REPLY ) }
  [[ -n $note ]] && { _tmux_run_fit "  $note"; text+=( $REPLY ) }
  [[ -n $_tmux_run_in ]] && { _tmux_run_fit "  ${_tmux_run_in//[[:cntrl:]]/?}"; text+=( $REPLY ) }
  # The walls it would run in (TMUX_RUN_SANDBOX, read again when the run starts).
  local sandbox=${TMUX_RUN_SANDBOX:-off}
  case $sandbox in
    (off) _tmux_run_fit "  sandbox: off (TMUX_RUN_SANDBOX: it can touch all you can)" ;;
    (workspace) _tmux_run_fit "  sandbox: workspace (writes only under $PWD and a private /tmp; no network)" ;;
    (workspace+net) _tmux_run_fit "  sandbox: workspace+net (writes only under $PWD and a private /tmp; network)" ;;
    (read-only) _tmux_run_fit "  sandbox: read-only (writes only in a private /tmp; no network)" ;;
    (*) _tmux_run_fit "  sandbox: TMUX_RUN_SANDBOX=${(V)${sandbox[1,20]}} is not a known value: the run will be refused" ;;
  esac
  text+=( $REPLY )
  _tmux_run_fit "Run it? [y]es / [n]o / [a]lways for this script (no answer in $limit s: no)"; text+=( $REPLY )

  # Keys that arrived before the question are not answers: keep them for the editor.
  while (( $#typed < 4096 )) && read -k 1 -t 0 c; do typed+=$c; done
  _tmux_run_asking=$nonce
  # ^C is an answer too (no): without the trap it would abort this widget with no answer given.
  trap 'answer=interrupt' INT
  {
    zle -M -- "${(pj:\n:)text}"
    zle -R
    local -F end=$(( ${(%):-"%D{%s.%.}"} + limit ))
    while :; do
      if read -k 1 -t 0.1 key; then answer=key; break; fi
      [[ $answer == interrupt ]] && break
      if _tmux_run_withdrawn $nonce; then answer=withdrawn; break; fi
      if (( ${(%):-"%D{%s.%.}"} >= end )); then answer=timeout; break; fi
    done
    # An escape sequence (arrow keys, function keys) is one answer: drop the rest of it.
    if [[ $key == $'\e' ]]; then
      while read -k 1 -t 0 c; do :; done
    fi
  } always {
    _tmux_run_asking=
  }
  if [[ $answer == withdrawn ]]; then
    msg="tmux-run: run ${run[1,8]} was cancelled while you were asked; nothing was run"
  elif [[ $answer == key && ( $key == y || $key == a ) ]]; then
    if _tmux_run_snapshot $nonce; then
      print -rn -u $_tmux_run_rsp_fd -- "K $nonce $key"$'\n'
      msg="tmux-run: run ${run[1,8]} approved"
      if [[ $key == a ]]; then
        _tmux_run_always[$digest]=1
        msg+="; script sha256 ${digest[1,12]} runs without asking while this pane stays enrolled"
      fi
    else
      print -rn -u $_tmux_run_rsp_fd -- "B $nonce snapshot_failed"$'\n'
      msg="tmux-run: run ${run[1,8]} could not start (the shell's state could not be written)"
    fi
  elif [[ $answer == timeout ]]; then
    print -rn -u $_tmux_run_rsp_fd -- "D $nonce approval_timeout"$'\n'
    msg="tmux-run: run ${run[1,8]} refused: no answer within $limit s; nothing was run"
  else
    print -rn -u $_tmux_run_rsp_fd -- "D $nonce denied"$'\n'
    msg="tmux-run: run ${run[1,8]} refused; nothing was run"
  fi
  zle -M -- "${notify:+$msg}"
  [[ -n $typed ]] && zle -U -- "$typed"
  return 0
}

# _tmux_run_withdrawn NONCE: true once the helper has withdrawn the question (the run was
# cancelled, or the helper ended); reads what the helper wrote without waiting.
_tmux_run_withdrawn() {
  emulate -L zsh
  local chunk
  sysread -t 0 -i $_tmux_run_req_fd chunk 2>/dev/null && _tmux_run_inbuf+=$chunk
  _tmux_run_take "W $1" && return 0
  kill -0 $_tmux_run_helper_pid 2>/dev/null || return 0
  return 1
}

# _tmux_run_precmd: at each prompt, notices a helper that is gone and says so.
_tmux_run_precmd() {
  emulate -L zsh
  [[ -n $_tmux_run_helper_pid ]] || return 0
  [[ -n $_tmux_run_generation ]] || { _tmux_run_starting; return 0 }
  [[ -n $_tmux_run_dormant ]] && { _tmux_run_dormant_modes; return 0 }
  [[ -n $_tmux_run_waking ]] && { _tmux_run_wake_pending; return 0 }
  if kill -0 $_tmux_run_helper_pid 2>/dev/null; then
    # The helper shows the mode in listings; the shell itself decides at each run.
    local REPLY
    _tmux_run_modes
    if [[ $REPLY != $_tmux_run_mode_sent ]]; then
      print -rn -u $_tmux_run_rsp_fd -- "M $REPLY"$'\n'
      _tmux_run_mode_sent=$REPLY
    fi
    return 0
  fi
  # Gone: dormant (its last line, D, not read yet: a command held the prompt), or lost.
  _tmux_run_dormant_pending && return 0
  _tmux_run_lost
}

# _tmux_run_modes: sets REPLY to what listings show of this prompt's modes, `MODE SANDBOX`
# (src/core/enrollment/shell-modes.ts): ask or auto, and the sandbox, `invalid` when not a known one.
_tmux_run_modes() {
  emulate -L zsh
  local mode=auto sandbox=${TMUX_RUN_SANDBOX:-off}
  [[ -n $TMUX_RUN_APPROVE && $TMUX_RUN_APPROVE != auto ]] && mode=ask
  [[ $sandbox == (off|workspace|workspace+net|read-only) ]] || sandbox=invalid
  REPLY="$mode $sandbox"
}

# _tmux_run_starting: a prompt while the helper starts. Its first line is left to the line editor
# (_tmux_run_on_request reads it in order with what follows); a helper that is gone, or silent
# for 10 seconds, ends the attempt here.
_tmux_run_starting() {
  emulate -L zsh
  setopt local_options extended_glob
  local chunk line
  if kill -0 $_tmux_run_helper_pid 2>/dev/null; then
    (( ${(%):-"%D{%s}"} - _tmux_run_since < 10 )) && return 0
    _tmux_run_failed "the helper did not become ready within 10 seconds"
    return 0
  fi
  # Gone: what it said before it went is all there is.
  while sysread -t 0 -i $_tmux_run_req_fd chunk 2>/dev/null; do _tmux_run_inbuf+=$chunk; done
  while [[ $_tmux_run_inbuf == *$'\n'* ]]; do
    line=${_tmux_run_inbuf%%$'\n'*}; _tmux_run_inbuf=${_tmux_run_inbuf#*$'\n'}
    case $line in
      (E\ *) _tmux_run_failed ${line#E }; return 0 ;;
      (R\ *)
        # Enrolled, then gone: what it left is an enrollment's.
        _tmux_run_enrollment=${(M)${${line#R }#* }:#[0-9a-f](#c32)}
        _tmux_run_lost
        return 0 ;;
    esac
  done
  _tmux_run_exited
}

# _tmux_run_lost: the helper of this enrollment is gone (killed, crashed): says so once, undoes
# the enrollment, and starts the orphan sweep (_tmux_run_sweep), which stops the runs it held and
# removes the enrollment's record, socket and run journal once it has read them.
_tmux_run_lost() {
  emulate -L zsh
  local REPLY
  _tmux_run_pane_name
  local pane=$REPLY dir=${_tmux_run_base:h} enrollment=$_tmux_run_enrollment node=$_tmux_run_node
  [[ -n $_tmux_run_helper_pid ]] && kill -TERM $_tmux_run_helper_pid 2>/dev/null
  if [[ -n $enrollment && -f $dir/$enrollment.json ]]; then
    _tmux_run_teardown keep-record
    _tmux_run_sweep $node $dir $enrollment
  else
    _tmux_run_teardown
  fi
  _tmux_run_say "tmux-run: the helper for $pane exited; this pane is no longer enrolled (source ${_tmux_run_snippet} to enroll it again)"
}

# _tmux_run_sweep NODE DIR ENROLLMENT: the broker's orphan sweep for this enrollment
# (src/broker/shell-sweep.ts), in the background: detached (its own process group, no job
# message), at the shell's own priority, with no descriptor of the enrollment (closed already) and
# none of the person's NODE_OPTIONS; it removes the record files itself (or does nothing if the
# broker was first).
_tmux_run_sweep() {
  emulate -L zsh
  setopt local_options no_bg_nice
  local sweep=${_tmux_run_snippet:h:h}/dist/src/broker/shell-sweep-main.js
  if [[ ! -r $sweep ]]; then
    zf_rm -f -- $2/$3.{json,sock,status} 2>/dev/null
    return 0
  fi
  NODE_OPTIONS= $1 -- $sweep $2 $3 </dev/null >/dev/null 2>&1 &!
}

# _tmux_run_teardown [keep-log|keep-record]: undoes exactly what enrollment did (handler,
# descriptors, hooks, files, names); keep-log leaves the helper's log for the person to read,
# keep-record the record and socket for the orphan sweep. The helper removes its
# own files when it ends; removing them here as well covers a helper that was killed and could not.
_tmux_run_teardown() {
  emulate -L zsh
  _tmux_run_undefer
  zle -D _tmux_run_deferred_start 2>/dev/null
  # (Never `exec {fd}<&- 2>/dev/null`: with exec, that would send the shell's stderr to
  # /dev/null for good. The braces keep the redirection to the group.)
  if [[ -n $_tmux_run_req_fd ]]; then
    zle -F $_tmux_run_req_fd 2>/dev/null
    { exec {_tmux_run_req_fd}<&- } 2>/dev/null
  fi
  [[ -n $_tmux_run_rsp_fd ]] && { exec {_tmux_run_rsp_fd}>&- } 2>/dev/null
  [[ -n $_tmux_run_keep_fd ]] && { exec {_tmux_run_keep_fd}>&- } 2>/dev/null
  if [[ -n $_tmux_run_base ]]; then
    zf_rm -f -- $_tmux_run_base.{req,rsp,env,trap,mode} 2>/dev/null
    [[ $1 == keep-log ]] || zf_rm -f -- $_tmux_run_base.log 2>/dev/null
    [[ -n $_tmux_run_enrollment && $1 != keep-record ]] && zf_rm -f -- ${_tmux_run_base:h}/$_tmux_run_enrollment.{json,sock,status} 2>/dev/null
  fi
  precmd_functions=(${precmd_functions:#_tmux_run_precmd})
  zle -D _tmux_run_on_request 2>/dev/null
  _tmux_run_untrap_int
  unset _tmux_run_helper_pid _tmux_run_req_fd _tmux_run_rsp_fd _tmux_run_base _tmux_run_generation
  unset _tmux_run_inbuf _tmux_run_enrollment _tmux_run_always _tmux_run_asking _tmux_run_mode_sent
  unset _tmux_run_since _tmux_run_node _tmux_run_dormant _tmux_run_waking _tmux_run_keep_fd
  return 0
}

# Dormant helpers (docs/light.md). A helper idle for TMUX_RUN_IDLE says D and exits
# (helper/dormancy.ts); the enrollment stays. A broker that needs it writes U into the request
# FIFO (src/broker/wake.ts); the line editor's handler starts a helper again, with the same
# enrollment (helper/wake.ts). Nothing here types into the terminal or forks in the handler but
# the helper's own start.

# _tmux_run_sleep: the helper said D: it goes dormant and exits. The shell keeps a write end of the
# request FIFO open itself (close-on-exec), so that no end of file comes once the helper is gone,
# and a broker's U reaches the line editor.
_tmux_run_sleep() {
  emulate -L zsh
  [[ -z $_tmux_run_dormant && -z $_tmux_run_waking && -n $_tmux_run_generation ]] || return 0
  local keep=
  sysopen -w -o cloexec,nonblock -u keep -- $_tmux_run_base.req 2>/dev/null || return 0
  typeset -g _tmux_run_keep_fd=$keep _tmux_run_dormant=1 _tmux_run_mode_sent=
  # zle stops watching a descriptor once it reported its hang-up: the helper waits for this Z
  # before it exits (so the hang-up never comes), and a D read at a prompt watches it again.
  print -rn -u $_tmux_run_rsp_fd -- $'Z\n' 2>/dev/null
  zle -F -w $_tmux_run_req_fd _tmux_run_on_request 2>/dev/null
  return 0
}

# _tmux_run_dormant_modes: a prompt while dormant: no helper to tell the modes, so the shell writes
# them into the channel's mode file itself when they changed (0600, in place, no link followed),
# as bash and fish do; listings read them there (src/broker/registry.ts).
_tmux_run_dormant_modes() {
  emulate -L zsh
  local REPLY fd
  _tmux_run_modes
  [[ $REPLY != $_tmux_run_mode_sent ]] || return 0
  sysopen -w -o creat,truncate,nofollow,cloexec -m 600 -u fd -- $_tmux_run_base.mode 2>/dev/null || return 0
  print -rn -u $fd -- "M $REPLY"$'\n' 2>/dev/null && _tmux_run_mode_sent=$REPLY
  exec {fd}>&-
  return 0
}

# _tmux_run_dormant_pending: at a prompt that finds the helper gone: true when its last line was D
# (read now: a command held the prompt when it went), the pane then dormant.
_tmux_run_dormant_pending() {
  emulate -L zsh
  local chunk
  while sysread -t 0 -i $_tmux_run_req_fd chunk 2>/dev/null; do _tmux_run_inbuf+=$chunk; done
  [[ $'\n'$_tmux_run_inbuf == *$'\n'D$'\n'* ]] || return 1
  _tmux_run_inbuf=${${:-$'\n'$_tmux_run_inbuf}#*$'\n'D$'\n'}
  _tmux_run_sleep
  [[ -n $_tmux_run_dormant ]]
}

# _tmux_run_wake: a broker asks for the dormant helper (U): it starts again as the first did
# (_tmux_run_launch, with TMUX_RUN_NODE and TMUX_RUN_IDLE as they are now), with TMUX_RUN_WAKE naming
# the enrollment in its environment only. Its descriptor 9 is the shell's kept write end, so a
# helper that dies before its first word is heard (the end of the FIFO). Once: the U of other
# brokers meanwhile finds it waking, or awake.
_tmux_run_wake() {
  emulate -L zsh
  setopt local_options no_bg_nice
  [[ -n $_tmux_run_dormant && -n $_tmux_run_keep_fd ]] || return 0
  local base=$_tmux_run_base node=${TMUX_RUN_NODE:-node} main=${_tmux_run_snippet:h:h}/dist/helper/main.js
  { export TMUX_RUN_WAKE=$_tmux_run_enrollment; _tmux_run_launch $base $node $main 9>&$_tmux_run_keep_fd } &!
  typeset -g _tmux_run_helper_pid=$! _tmux_run_waking=1 _tmux_run_since=${(%):-"%D{%s}"} _tmux_run_node=$node
  unset _tmux_run_dormant
  { exec {_tmux_run_keep_fd}>&- } 2>/dev/null
  unset _tmux_run_keep_fd
  return 0
}

# _tmux_run_woken LINE: the woken helper's first line: R with this enrollment's generations (awake
# again: the mode is reported at once), or E REASON. Returns 1 when the enrollment ended.
_tmux_run_woken() {
  emulate -L zsh
  if [[ $1 == "R $_tmux_run_generation $_tmux_run_enrollment" ]]; then
    unset _tmux_run_waking
    _tmux_run_mode_sent=
    _tmux_run_precmd
    return 0
  fi
  local reason="the helper answered in a way this snippet does not understand"
  [[ $1 == E\ * ]] && reason=${1#E }
  _tmux_run_wake_failed $reason
  return 1
}

# _tmux_run_wake_pending: a prompt while the woken helper starts: one gone or silent for 10 seconds
# ends the enrollment (what it said before it went is read first).
_tmux_run_wake_pending() {
  emulate -L zsh
  setopt local_options extended_glob
  if kill -0 $_tmux_run_helper_pid 2>/dev/null; then
    (( ${(%):-"%D{%s}"} - _tmux_run_since < 10 )) && return 0
    _tmux_run_wake_failed "the helper did not become ready within 10 seconds"
    return 0
  fi
  local chunk line
  while sysread -t 0 -i $_tmux_run_req_fd chunk 2>/dev/null; do _tmux_run_inbuf+=$chunk; done
  while [[ $_tmux_run_inbuf == *$'\n'* ]]; do
    line=${_tmux_run_inbuf%%$'\n'*}; _tmux_run_inbuf=${_tmux_run_inbuf#*$'\n'}
    [[ $line == (R|E)\ * ]] || continue
    _tmux_run_woken $line && _tmux_run_lost
    return 0
  done
  _tmux_run_wake_gone
}

# _tmux_run_wake_gone: the woken helper is gone before its first line: the reason is in its log.
_tmux_run_wake_gone() {
  emulate -L zsh
  local REPLY
  _tmux_run_log_reason $_tmux_run_base.log
  _tmux_run_wake_failed "the helper exited before it was ready: $REPLY"
}

# _tmux_run_wake_failed REASON: the helper could not be started again: the enrollment ends (its
# record goes, so the broker that asked refuses the call, wake_failed, with nothing run), the log
# is kept, and the pane is told once.
_tmux_run_wake_failed() {
  emulate -L zsh
  local REPLY
  _tmux_run_pane_name
  _tmux_run_failed $1 "the helper for $REPLY could not be started again, so the pane is no longer enrolled (source ${_tmux_run_snippet} to enroll it again)"
}

# tmux_run_unenroll: ends this pane's enrollment. Returns 0, or 1 when it was not enrolled.
tmux_run_unenroll() {
  emulate -L zsh
  if [[ -n $_tmux_run_deferred ]]; then
    local REPLY
    _tmux_run_pane_name
    _tmux_run_teardown
    print -r -- "tmux-run: $REPLY unenrolled"
    return 0
  fi
  if [[ -z $_tmux_run_helper_pid ]]; then
    print -ru2 -- "tmux-run: this shell is not enrolled"
    return 1
  fi
  local REPLY pid=$_tmux_run_helper_pid
  _tmux_run_pane_name
  local pane=$REPLY
  if [[ -n $_tmux_run_dormant ]]; then
    # No helper to stop (its pid may be another process's by now): the files go with the teardown.
    _tmux_run_teardown
    print -r -- "tmux-run: $pane unenrolled"
    return 0
  fi
  # The helper removes its record first thing on SIGTERM; closing the channel also ends it.
  kill -TERM $pid 2>/dev/null
  _tmux_run_teardown
  _tmux_run_stop $pid
  print -r -- "tmux-run: $pane unenrolled"
}

[[ $_tmux_run_aliases == on ]] && setopt aliases
unset _tmux_run_aliases

_tmux_run_enroll
