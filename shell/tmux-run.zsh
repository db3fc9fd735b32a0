# tmux-run.zsh: enroll this zsh pane so an agent can run scripts in it through tmux-run.
#
#   source /path/to/tmux-run/shell/tmux-run.zsh     # enroll (again: harmless)
#   tmux_run_unenroll                               # end the enrollment from this shell
#
# Nothing is ever typed into this terminal. A small helper process answers the broker; it asks
# this shell, through zle's own descriptor handler, whether the line editor is idle and empty,
# and for the current directory and exported environment. Set TMUX_RUN_NOTIFY=off to hide the
# notices drawn when a run starts and ends.

# Refuse early in shells that are not zsh; this part must parse in any POSIX shell.
if [ -z "${ZSH_VERSION-}" ]; then
  echo "tmux-run: not enrolled: this shell is not zsh; tmux-run needs an interactive zsh 5.9 or newer" >&2
  return 1 2>/dev/null || exit 1
fi

typeset -g _tmux_run_snippet=${${(%):-%x}:A}

# _tmux_run_enroll: checks everything, starts the helper, waits for it to be ready.
# Returns 0 when enrolled (or already enrolled), 1 with one line on stderr otherwise.
_tmux_run_enroll() {
  emulate -L zsh
  setopt local_options no_bg_nice
  local -a v=( ${(s:.:)ZSH_VERSION} )
  if (( ${v[1]:-0} < 5 || ( ${v[1]:-0} == 5 && ${v[2]:-0} < 9 ) )); then
    print -ru2 -- "tmux-run: not enrolled: zsh $ZSH_VERSION is too old; zsh 5.9 or newer is required"
    return 1
  fi
  if [[ ! -o interactive ]]; then
    print -ru2 -- "tmux-run: not enrolled: this zsh is not interactive"
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
  if (( ! ${+builtins[sysopen]} || ! ${+builtins[zstat]} || ! ${+builtins[zf_rm]} )); then
    print -ru2 -- "tmux-run: not enrolled: zsh modules zsh/system, zsh/stat and zsh/files are needed"
    return 1
  fi

  local dir
  if [[ -n $TMUX_RUN_DIR ]]; then dir=$TMUX_RUN_DIR
  elif [[ -n $XDG_RUNTIME_DIR ]]; then dir=$XDG_RUNTIME_DIR/tmux-run
  else dir=/tmp/tmux-run-$EUID
  fi
  [[ -e $dir || -L $dir ]] || zf_mkdir -m 700 -- $dir 2>/dev/null
  local -A st
  if ! zstat -L -H st -- $dir 2>/dev/null; then
    print -ru2 -- "tmux-run: not enrolled: cannot create the directory $dir"
    return 1
  fi
  if [[ -L $dir || ! -d $dir ]]; then
    print -ru2 -- "tmux-run: not enrolled: $dir is not a directory (a symlink or a file); remove it or set TMUX_RUN_DIR"
    return 1
  fi
  if (( st[uid] != EUID )); then
    print -ru2 -- "tmux-run: not enrolled: $dir belongs to uid $st[uid], not to you (uid $EUID); remove it or set TMUX_RUN_DIR"
    return 1
  fi
  if (( (st[mode] & 63) != 0 )); then
    print -ru2 -- "tmux-run: not enrolled: $dir is open to other users (mode $(( [##8] st[mode] & 4095 ))); run: chmod 700 '$dir'"
    return 1
  fi

  local main=${_tmux_run_snippet:h:h}/dist/helper/main.js
  if [[ ! -r $main ]]; then
    print -ru2 -- "tmux-run: not enrolled: the helper $main is missing; run 'npm install' in ${_tmux_run_snippet:h:h}"
    return 1
  fi
  local node=${TMUX_RUN_NODE:-node}
  if (( ! $+commands[$node] )) && [[ ! -x $node ]]; then
    print -ru2 -- "tmux-run: not enrolled: node was not found on PATH (set TMUX_RUN_NODE to its path)"
    return 1
  fi

  local base=$dir/ch.$$.$RANDOM$RANDOM
  if ! command mkfifo -m 600 -- $base.req $base.rsp 2>/dev/null; then
    print -ru2 -- "tmux-run: not enrolled: cannot create the shell channel in $dir"
    return 1
  fi
  local req rsp logfd
  # Both ends are opened read-write (no blocking), close-on-exec (never inherited by commands).
  if ! sysopen -rw -o cloexec -u req -- $base.req || ! sysopen -rw -o cloexec -u rsp -- $base.rsp \
     || ! sysopen -a -o cloexec,creat,nofollow -m 600 -u logfd -- $base.log; then
    [[ -n $req ]] && exec {req}<&-
    [[ -n $rsp ]] && exec {rsp}<&-
    zf_rm -f -- $base.req $base.rsp
    print -ru2 -- "tmux-run: not enrolled: cannot open the shell channel in $dir"
    return 1
  fi
  $node --max-semi-space-size=1 --max-old-space-size=32 -- $main $base </dev/null >&$logfd 2>&1 &!
  local hpid=$!
  exec {logfd}>&-

  local buf= chunk line generation= err=
  while [[ -z $generation && -z $err ]]; do
    if ! sysread -t 10 -i $req chunk; then
      err="the helper did not start within 10 seconds (log: $base.log)"
      kill -TERM $hpid 2>/dev/null
      break
    fi
    buf+=$chunk
    while [[ $buf == *$'\n'* ]]; do
      line=${buf%%$'\n'*}; buf=${buf#*$'\n'}
      case $line in
        (R\ *) generation=${line#R } ;;
        (E\ *) err=${line#E } ;;
      esac
    done
  done
  if [[ -n $err ]]; then
    exec {req}<&- {rsp}>&-
    zf_rm -f -- $base.req $base.rsp
    print -ru2 -- "tmux-run: not enrolled: $err"
    return 1
  fi

  typeset -g _tmux_run_helper_pid=$hpid _tmux_run_req_fd=$req _tmux_run_rsp_fd=$rsp
  typeset -g _tmux_run_base=$base _tmux_run_generation=$generation _tmux_run_inbuf=
  zle -N _tmux_run_on_request
  zle -F -w $req _tmux_run_on_request
  precmd_functions+=(_tmux_run_precmd)
  zshexit_functions+=(_tmux_run_zshexit)
  return 0
}

# _tmux_run_on_request: the zle -F widget; reads the helper's lines and answers each.
# Q NONCE: answer K NONCE after writing cwd and exported environment, or B NONCE REASON.
# N TEXT: draw a notice with zle -M. X: the enrollment was revoked.
_tmux_run_on_request() {
  emulate -L zsh
  local chunk line
  if ! sysread -i $_tmux_run_req_fd chunk 2>/dev/null || [[ -n $2 ]]; then
    _tmux_run_teardown
    zle -M "tmux-run: the channel to the helper closed; this pane is no longer enrolled"
    return 0
  fi
  _tmux_run_inbuf+=$chunk
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

# _tmux_run_answer NONCE: tells the helper whether the editor is idle and empty; if so,
# writes NONCE, PWD and the exported environment (NUL-separated) to the snapshot file first.
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
  local -a kv
  local n fd
  for n in ${(k)parameters[(R)*export*]}; do
    kv+=("$n=${(P)n}")
  done
  if ! sysopen -w -o cloexec,creat,trunc,nofollow -m 600 -u fd -- $_tmux_run_base.env 2>/dev/null; then
    print -rn -u $_tmux_run_rsp_fd -- "B $nonce snapshot_failed"$'\n'
    return 0
  fi
  print -rn -u $fd -- "$nonce"$'\0'"$PWD"$'\0'"${(pj:\0:)kv}"
  exec {fd}>&-
  print -rn -u $_tmux_run_rsp_fd -- "K $nonce"$'\n'
}

# _tmux_run_precmd: at each prompt, notices a helper that is gone and says so.
_tmux_run_precmd() {
  emulate -L zsh
  [[ -n $_tmux_run_helper_pid ]] || return 0
  kill -0 $_tmux_run_helper_pid 2>/dev/null && return 0
  print -ru2 -- "tmux-run: the helper for pane $TMUX_PANE exited; this pane is no longer enrolled (source ${_tmux_run_snippet} to enroll it again)"
  _tmux_run_teardown
}

# _tmux_run_zshexit: the shell is exiting; end the helper with it.
_tmux_run_zshexit() {
  emulate -L zsh
  [[ -n $_tmux_run_helper_pid ]] && kill -TERM $_tmux_run_helper_pid 2>/dev/null
  return 0
}

# _tmux_run_teardown: undoes exactly what enrollment did (handler, descriptors, hooks, names).
_tmux_run_teardown() {
  emulate -L zsh
  if [[ -n $_tmux_run_req_fd ]]; then
    zle -F $_tmux_run_req_fd 2>/dev/null
    exec {_tmux_run_req_fd}<&- 2>/dev/null
  fi
  [[ -n $_tmux_run_rsp_fd ]] && exec {_tmux_run_rsp_fd}>&- 2>/dev/null
  [[ -n $_tmux_run_base ]] && zf_rm -f -- $_tmux_run_base.req $_tmux_run_base.rsp $_tmux_run_base.env 2>/dev/null
  precmd_functions=(${precmd_functions:#_tmux_run_precmd})
  zshexit_functions=(${zshexit_functions:#_tmux_run_zshexit})
  zle -D _tmux_run_on_request 2>/dev/null
  unset _tmux_run_helper_pid _tmux_run_req_fd _tmux_run_rsp_fd _tmux_run_base _tmux_run_generation _tmux_run_inbuf
  return 0
}

# tmux_run_unenroll: ends this pane's enrollment. Returns 0, or 1 when it was not enrolled.
tmux_run_unenroll() {
  emulate -L zsh
  if [[ -z $_tmux_run_helper_pid ]]; then
    print -ru2 -- "tmux-run: this shell is not enrolled"
    return 1
  fi
  local pane=$TMUX_PANE
  kill -TERM $_tmux_run_helper_pid 2>/dev/null
  _tmux_run_teardown
  print -r -- "tmux-run: pane $pane unenrolled"
}

_tmux_run_enroll
