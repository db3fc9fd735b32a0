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

# _tmux_run_enroll: checks everything, starts the helper, waits for it to be ready.
# Returns 0 when enrolled (or already enrolled), 1 with one line on stderr otherwise; a refusal
# leaves nothing behind (no file in the directory, no helper process).
_tmux_run_enroll() {
  emulate -L zsh
  setopt local_options local_traps no_bg_nice extended_glob
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
  if [[ -z $TMUX || -z $TMUX_PANE ]]; then
    print -ru2 -- "tmux-run: not enrolled: this shell is not running inside tmux (TMUX and TMUX_PANE are unset)"
    return 1
  fi
  if [[ -n $_tmux_run_helper_pid ]] && kill -0 $_tmux_run_helper_pid 2>/dev/null; then
    print -ru2 -- "tmux-run: pane $TMUX_PANE is already enrolled (generation $_tmux_run_generation)"
    return 0
  fi
  [[ -n $_tmux_run_helper_pid ]] && _tmux_run_teardown

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
  if (( ! $+commands[$node] )) && [[ $node != */* || ! -x $node ]]; then
    print -ru2 -- "tmux-run: not enrolled: node was not found on PATH (set TMUX_RUN_NODE to its path)"
    return 1
  fi

  # ^C from here on abandons the enrollment cleanly (checked while waiting for the helper).
  local intr=0
  trap 'intr=1' INT

  local base=$dir/ch.$$.$RANDOM$RANDOM
  if ! command mkfifo -m 600 -- $base.req $base.rsp 2>/dev/null; then
    zf_rm -f -- $base.req $base.rsp 2>/dev/null
    print -ru2 -- "tmux-run: not enrolled: cannot create the shell channel in $dir"
    return 1
  fi
  local req= rsp= logfd=
  # Both FIFOs are opened read-write (no blocking) and close-on-exec (never inherited by the
  # commands the person runs). The log takes the helper's stdout and stderr.
  if ! sysopen -rw -o cloexec -u req -- $base.req 2>/dev/null || ! sysopen -rw -o cloexec -u rsp -- $base.rsp 2>/dev/null \
     || ! sysopen -a -o cloexec,creat,excl,nofollow -m 600 -u logfd -- $base.log 2>/dev/null; then
    [[ -n $req ]] && exec {req}<&-
    [[ -n $rsp ]] && exec {rsp}<&-
    [[ -n $logfd ]] && exec {logfd}>&-
    zf_rm -f -- $base.req $base.rsp $base.log 2>/dev/null
    print -ru2 -- "tmux-run: not enrolled: cannot open the shell channel in $dir"
    return 1
  fi

  # The person's NODE_OPTIONS (--inspect, --require) are not for the helper. The helper lives as
  # long as the pane and its JavaScript runs well under a millisecond per run: --no-opt and
  # --optimize-for-size give up speed it does not need for about 8 MB resident. glibc's malloc
  # hands freed blocks of 32 KB and more back at once (Node reads pipes into 64 KB buffers, which
  # otherwise stay resident after a run with a lot of output) and keeps two arenas. Scripts never
  # see these variables: they run with the shell's own environment, sent at dispatch.
  NODE_OPTIONS= MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768 \
    $node --max-semi-space-size=1 --max-old-space-size=32 --no-opt --optimize-for-size --expose-gc -- $main $base </dev/null >&$logfd 2>&1 &!
  local hpid=$!
  exec {logfd}>&-

  # Wait for "R GENERATION ENROLLMENT" or "E REASON", at most 10 seconds, noticing at once a
  # helper that exits without a word or a ^C.
  local buf= chunk line generation= enrollment= err= rc
  integer ticks=0
  while [[ -z $generation && -z $err ]]; do
    sysread -t 0.1 -i $req chunk; rc=$?
    if (( rc == 0 )); then
      buf+=$chunk
      while [[ $buf == *$'\n'* ]]; do
        line=${buf%%$'\n'*}; buf=${buf#*$'\n'}
        case $line in
          (R\ *) generation=${${line#R }%% *}; enrollment=${${line#R }#* } ;;
          (E\ *) err=${line#E } ;;
        esac
      done
    elif (( intr )); then
      err="interrupted"
    elif (( rc != 4 )); then
      err="cannot read from the shell channel"
    elif ! kill -0 $hpid 2>/dev/null; then
      sysread -t 0 -i $req chunk && { buf+=$chunk; continue }
      err="the helper exited before it was ready: $(_tmux_run_log_reason $base.log)"
    elif (( ++ticks >= 100 )); then
      err="the helper did not become ready within 10 seconds"
    fi
  done
  trap - INT
  if [[ -n $err || $generation != [0-9a-f](#c32) || $enrollment != [0-9a-f](#c32) ]]; then
    [[ -n $err ]] || err="the helper answered in a way this snippet does not understand"
    _tmux_run_stop $hpid
    exec {req}<&- {rsp}>&-
    zf_rm -f -- $base.req $base.rsp $base.env $base.log 2>/dev/null
    [[ $enrollment == [0-9a-f](#c32) ]] && zf_rm -f -- $dir/$enrollment.json $dir/$enrollment.sock 2>/dev/null
    # (After ^C the terminal has echoed "^C" on the command's line: start a fresh one.)
    (( intr )) && print -u2
    print -ru2 -- "tmux-run: not enrolled: $err"
    (( intr )) && return 130
    return 1
  fi

  typeset -g _tmux_run_helper_pid=$hpid _tmux_run_req_fd=$req _tmux_run_rsp_fd=$rsp
  typeset -g _tmux_run_base=$base _tmux_run_generation=$generation _tmux_run_inbuf=
  typeset -g _tmux_run_enrollment=$enrollment
  # Ask mode: the digests the person answered `a` for (private, never exported), the question
  # being asked (its nonce), and the mode last reported to the helper.
  typeset -gA _tmux_run_always=()
  typeset -g _tmux_run_asking= _tmux_run_mode_sent=
  zle -N _tmux_run_on_request
  zle -F -w $req _tmux_run_on_request
  precmd_functions+=(_tmux_run_precmd)
  return 0
}

# _tmux_run_dir: sets REPLY to the registry directory: TMUX_RUN_DIR, else
# $XDG_RUNTIME_DIR/tmux-run, else /run/user/UID/tmux-run when that runtime directory is a real
# directory of this user's, else /tmp/tmux-run-UID (as src/enrollment/layout.ts decides).
_tmux_run_dir() {
  emulate -L zsh
  if [[ -n $TMUX_RUN_DIR ]]; then REPLY=$TMUX_RUN_DIR
  elif [[ -n $XDG_RUNTIME_DIR ]]; then REPLY=$XDG_RUNTIME_DIR/tmux-run
  elif [[ -d /run/user/$EUID && ! -L /run/user/$EUID && -O /run/user/$EUID ]]; then REPLY=/run/user/$EUID/tmux-run
  else REPLY=/tmp/tmux-run-$EUID
  fi
}

# _tmux_run_log_reason LOG: the line of a helper's log that best says why it stopped.
_tmux_run_log_reason() {
  emulate -L zsh
  setopt local_options extended_glob
  local -a lines
  lines=( ${(f)"$(<$1)"} ) 2>/dev/null
  lines=( ${lines:#[[:space:]]#} )
  local pick=${${(M)lines:#*(enrollment failed|fatal|Error|error)*}[-1]:-${lines[-1]}}
  pick=${pick#*tmux-run-helper\[<->\]: }
  [[ -n $pick ]] || pick="it printed nothing"
  print -r -- ${pick[1,300]}
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
# Q NONCE: answer K NONCE after writing cwd and exported environment, or B NONCE REASON; in ask
# mode, ask the person first (_tmux_run_approve). N TEXT: draw a notice with zle -M. X: the
# enrollment was revoked. While a question is up, zle calls this widget again from inside the
# question's `read -k`: it then only collects the lines, and the question reads what is its own.
_tmux_run_on_request() {
  emulate -L zsh
  local chunk line
  if [[ -n $2 ]] || ! sysread -i $_tmux_run_req_fd chunk 2>/dev/null; then
    [[ -n $_tmux_run_helper_pid ]] && kill -TERM $_tmux_run_helper_pid 2>/dev/null
    _tmux_run_teardown
    zle -M "tmux-run: the channel to the helper closed; this pane is no longer enrolled"
    return 0
  fi
  _tmux_run_inbuf+=$chunk
  [[ -n $_tmux_run_asking ]] && return 0
  while [[ $_tmux_run_inbuf == *$'\n'* ]]; do
    line=${_tmux_run_inbuf%%$'\n'*}; _tmux_run_inbuf=${_tmux_run_inbuf#*$'\n'}
    case $line in
      (Q\ *) _tmux_run_answer ${line#Q } ;;
      (N\ *) [[ $TMUX_RUN_NOTIFY == (off|0|no|false) ]] || zle -M -- "${line#N }" ;;
      (X*)
        _tmux_run_teardown
        [[ $TMUX_RUN_NOTIFY == (off|0|no|false) ]] || zle -M -- "tmux-run: this pane's enrollment was revoked"
        return 0 ;;
    esac
  done
  return 0
}

# _tmux_run_answer NONCE: tells the helper whether the editor is idle and empty; if so, and the
# shell does not ask (TMUX_RUN_APPROVE unset, empty or auto), writes the snapshot and answers K.
_tmux_run_answer() {
  local nonce=$1 reason=
  if [[ -n $BUFFER || -n $PREBUFFER ]]; then reason=editor_not_empty
  elif [[ $CONTEXT != start ]]; then reason=context:$CONTEXT
  elif (( ${PENDING:-0} > 0 )); then reason=pending_input
  fi
  if [[ -n $reason ]]; then
    print -rn -u $_tmux_run_rsp_fd -- "B $nonce $reason"$'\n'
    return 0
  fi
  if [[ -n $TMUX_RUN_APPROVE && $TMUX_RUN_APPROVE != auto ]]; then
    _tmux_run_approve $nonce
  elif _tmux_run_snapshot $nonce; then
    print -rn -u $_tmux_run_rsp_fd -- "K $nonce"$'\n'
  else
    print -rn -u $_tmux_run_rsp_fd -- "B $nonce snapshot_failed"$'\n'
  fi
}

# _tmux_run_snapshot NONCE: writes NONCE, PWD and the exported environment (NUL-separated) to
# the snapshot file the helper reads; returns 1 when the file cannot be made. When TMUX_RUN_SANDBOX
# is set and not off, also the parameters the sandbox reads, exported or not, as :NAME=VALUE
# entries (no parameter name starts with a colon); an array is joined with colons.
_tmux_run_snapshot() {
  local -a kv
  local n fd
  for n in ${(k)parameters[(R)*export*]}; do
    kv+=("$n=${(P)n}")
  done
  if [[ -n ${TMUX_RUN_SANDBOX-} && $TMUX_RUN_SANDBOX != off ]]; then
    for n in TMUX_RUN_SANDBOX TMUX_RUN_SANDBOX_WRITE TMUX_RUN_SANDBOX_HIDE HOME ZDOTDIR XDG_CONFIG_HOME \
        XDG_RUNTIME_DIR SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS TMUX TMUX_TMPDIR; do
      (( ${+parameters[$n]} )) && kv+=(":$n=${(j.:.)${(@P)n}}")
    done
  fi
  # A new file each time: truncating the last one in place costs ext4 about 0.2 ms a run,
  # removing it a tenth of that. (Anything but a plain file there still fails the open.)
  [[ -f $_tmux_run_base.env && ! -L $_tmux_run_base.env ]] && zf_rm -f -- $_tmux_run_base.env 2>/dev/null
  sysopen -w -o cloexec,creat,excl,nofollow -m 600 -u fd -- $_tmux_run_base.env 2>/dev/null || return 1
  print -rn -u $fd -- "$1"$'\0'"$PWD"$'\0'"${(pj:\0:)kv}"
  exec {fd}>&-
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
  local sep=$'\x1f' l key c typed=
  local -a text shown
  integer more
  shown=( "${(@ps:$sep:)rest}" )
  _tmux_run_fit "tmux-run: an agent asks to run a script in this shell (TMUX_RUN_APPROVE=ask)"; text+=( $REPLY )
  _tmux_run_fit "  run ${run[1,8]}  sha256 ${digest[1,12]}  $bytes bytes, $nlines line${${nlines:#1}:+s}:"; text+=( $REPLY )
  for l in "${shown[@]}"; do
    _tmux_run_fit "  | ${l//[[:cntrl:]]/?}"; text+=( $REPLY )
  done
  more=$(( nlines - $#shown ))
  (( more > 0 )) && { _tmux_run_fit "  ($more more line${${more:#1}:+s} not shown)"; text+=( $REPLY ) }
  [[ -n $note ]] && { _tmux_run_fit "  $note"; text+=( $REPLY ) }
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
  if kill -0 $_tmux_run_helper_pid 2>/dev/null; then
    # The helper shows the mode in listings; the shell itself decides at each run.
    local mode=auto sandbox=${TMUX_RUN_SANDBOX:-off}
    [[ -n $TMUX_RUN_APPROVE && $TMUX_RUN_APPROVE != auto ]] && mode=ask
    [[ $sandbox == (off|workspace|workspace+net|read-only) ]] || sandbox=invalid
    if [[ "$mode $sandbox" != $_tmux_run_mode_sent ]]; then
      print -rn -u $_tmux_run_rsp_fd -- "M $mode $sandbox"$'\n'
      _tmux_run_mode_sent="$mode $sandbox"
    fi
    return 0
  fi
  print -ru2 -- "tmux-run: the helper for pane $TMUX_PANE exited; this pane is no longer enrolled (source ${_tmux_run_snippet} to enroll it again)"
  _tmux_run_teardown
}

# _tmux_run_teardown: undoes exactly what enrollment did (handler, descriptors, hooks, files,
# names). The helper removes its own files when it ends; removing them here as well covers a
# helper that was killed and could not.
_tmux_run_teardown() {
  emulate -L zsh
  # (Never `exec {fd}<&- 2>/dev/null`: with exec, that would send the shell's stderr to
  # /dev/null for good. The braces keep the redirection to the group.)
  if [[ -n $_tmux_run_req_fd ]]; then
    zle -F $_tmux_run_req_fd 2>/dev/null
    { exec {_tmux_run_req_fd}<&- } 2>/dev/null
  fi
  [[ -n $_tmux_run_rsp_fd ]] && { exec {_tmux_run_rsp_fd}>&- } 2>/dev/null
  if [[ -n $_tmux_run_base ]]; then
    zf_rm -f -- $_tmux_run_base.{req,rsp,env,log} 2>/dev/null
    [[ -n $_tmux_run_enrollment ]] && zf_rm -f -- ${_tmux_run_base:h}/$_tmux_run_enrollment.{json,sock} 2>/dev/null
  fi
  precmd_functions=(${precmd_functions:#_tmux_run_precmd})
  zle -D _tmux_run_on_request 2>/dev/null
  unset _tmux_run_helper_pid _tmux_run_req_fd _tmux_run_rsp_fd _tmux_run_base _tmux_run_generation
  unset _tmux_run_inbuf _tmux_run_enrollment _tmux_run_always _tmux_run_asking _tmux_run_mode_sent
  return 0
}

# tmux_run_unenroll: ends this pane's enrollment. Returns 0, or 1 when it was not enrolled.
tmux_run_unenroll() {
  emulate -L zsh
  if [[ -z $_tmux_run_helper_pid ]]; then
    print -ru2 -- "tmux-run: this shell is not enrolled"
    return 1
  fi
  local pane=$TMUX_PANE pid=$_tmux_run_helper_pid
  # The helper removes its record first thing on SIGTERM; closing the channel also ends it.
  kill -TERM $pid 2>/dev/null
  _tmux_run_teardown
  _tmux_run_stop $pid
  print -r -- "tmux-run: pane $pane unenrolled"
}

[[ $_tmux_run_aliases == on ]] && setopt aliases
unset _tmux_run_aliases

_tmux_run_enroll
