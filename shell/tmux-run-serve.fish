# tmux-run-serve.fish: the rest of shell/tmux-run.fish, read by it once its helper first has
# something to say, or when a case needs it (_tmux_run_serve): the refusals' words, sourcing again,
# answering the helper's requests, notices, the prompt as fish draws it, the snapshot, dormancy and
# waking, and the end of an enrollment. Not for sourcing by hand: source shell/tmux-run.fish. Kept
# apart so that fish does not parse it on its way to the first prompt; its names, like the
# snippet's, start with _tmux_run_ (fish 3.4 or newer: the snippet refuses older ones itself).
if not set -q _tmux_run_snippet[1]
    echo "tmux-run: source shell/tmux-run.fish, not this file" >&2
    return 1
end

# _tmux_run_refuse WHY DIR NODE: says why the pane is not enrolled (what _tmux_run_enroll found).
function _tmux_run_refuse --argument-names why dir node --description 'tmux-run: say why this fish is not enrolled'
    set -l root (string replace -r '/shell/[^/]*$' '' -- $_tmux_run_snippet)
    set -l text
    switch $why
        case tmux
            set text "this shell is not running inside tmux (TMUX and TMUX_PANE are unset)"
        case relative
            set text "the directory $dir is not an absolute path; set TMUX_RUN_DIR to one"
        case symlink
            set text "$dir is a symlink; refusing to use it (remove it or set TMUX_RUN_DIR)"
        case file
            set text "$dir is not a directory (or cannot be created); remove it or set TMUX_RUN_DIR"
        case owner
            set text "$dir does not belong to you; remove it or set TMUX_RUN_DIR"
        case main
            set text "the helper $root/dist/helper/main.js is missing; run 'npm install' in $root"
        case node
            if set -q TMUX_RUN_NODE[1]
                set text "TMUX_RUN_NODE=$node is not a program that can be run (set it to node's absolute path, or unset it to use node on PATH)"
            else
                set text "node was not found on PATH (set TMUX_RUN_NODE to its path)"
            end
        case channel
            set text "cannot create the shell channel in $dir"
        case '*'
            set text $why
    end
    echo "tmux-run: not enrolled: $text" >&2
    # That no one else can use the directory (mode 700): fish has no stat of its own, so the helper
    # checks it first thing (checkRegistryDir) and refuses; said at the prompt after.
    return 1
end

# _tmux_run_pane_name: how messages name this pane: its tmux id, or at the far end of a
# `tmux-run ssh` session (no tmux of the pane's here) the session's pane.
function _tmux_run_pane_name --description 'tmux-run: how messages name this pane'
    if set -q _tmux_run_remote[1]
        echo "the pane of this ssh session"
    else
        echo "pane $TMUX_PANE"
    end
end

# _tmux_run_enroll_again: shell/tmux-run.fish sourced in a fish that is not new to it: an
# enrollment that is there (awake, starting, held until the first prompt, or dormant) is said and
# kept; a helper that died unnoticed (no prompt since) is said first, as a prompt would have.
# Returns 0 (nothing more to do) or 2 (enroll anew).
function _tmux_run_enroll_again --description 'tmux-run: sourced again'
    if set -q _tmux_run_dormant[1]; or set -q _tmux_run_waking[1]
        echo "tmux-run: "(_tmux_run_pane_name)" is already enrolled (generation $_tmux_run_generation; its helper is dormant until a run needs it)" >&2
        return 0
    end
    # Held until the first prompt, or still starting (sourced twice in start-up files, say): that
    # start goes on, silently.
    set -q _tmux_run_held[1]; and return 0
    if set -q _tmux_run_helper_pid[1]; and _tmux_run_alive
        set -q _tmux_run_generation[1]; and echo "tmux-run: "(_tmux_run_pane_name)" is already enrolled (generation $_tmux_run_generation)" >&2
        return 0
    end
    # Its helper died unnoticed (no prompt since): say so first, as a prompt would have.
    set -q _tmux_run_helper_pid[1]; and _tmux_run_on_prompt_served $status
    return 2
end

# _tmux_run_stop_replaced DIR FILES...: stops the helper whose record names one of these channel
# files' prefix, when it is this process's child: a fish that ran `exec fish` left it behind.
function _tmux_run_stop_replaced --argument-names dir --description 'tmux-run: stop the helper of a replaced fish'
    set -l bases
    for f in $argv[2..-1]
        set -l b (string replace -r '\.[a-z]+$' '' -- $f)
        contains -- $b $bases; or set -a bases $b
    end
    for rec in $dir/*.json
        set -l text (string collect <$rec 2>/dev/null)
        for b in $bases
            string match -q -- "*\"$b\"*" "$text"; or continue
            set -l pid (string match -r '"helper_pid":\s*(\d+)' -- "$text")[2]
            test -n "$pid"; or continue
            # (A redirection from a file that is gone prints fish's own warning, whatever 2> says.)
            test -r /proc/$pid/stat; and read -l stat </proc/$pid/stat 2>/dev/null; or continue
            set -l rest (string split ' ' -- (string replace -r '^.*\) ' '' -- $stat))
            test "$rest[2]" = $fish_pid; and _tmux_run_stop $pid
        end
    end
end

function _tmux_run_uptime --description 'tmux-run: prints whole seconds since boot (no fork)'
    read -l up </proc/uptime 2>/dev/null; or set up 0
    string split -f1 . -- $up
end

# _tmux_run_alive: true while this enrollment's helper runs (our child, not a zombie), read from
# /proc without a fork.
function _tmux_run_alive --description 'tmux-run: is the helper alive'
    set -q _tmux_run_helper_pid[1]; or return 1
    # (A redirection from a file that is gone prints fish's own warning, whatever 2> says.)
    test -r /proc/$_tmux_run_helper_pid/stat; and read -l stat </proc/$_tmux_run_helper_pid/stat 2>/dev/null; or return 1
    # pid (comm) state ppid ...: the fields after the last ')'.
    set -l rest (string split ' ' -- (string replace -r '^.*\) ' '' -- $stat))
    test "$rest[1]" != Z; and test "$rest[2]" = $fish_pid
end

# _tmux_run_write FILE FORMAT ARGS...: printf FORMAT ARGS to FILE, created 0600 whatever the
# person's umask (set for the write and put back: fish's umask variable, not its slower function).
function _tmux_run_write --argument-names file --description 'tmux-run: write a private file of the channel'
    set -l saved $umask
    set -g umask 0077
    printf $argv[2..-1] >$file 2>/dev/null
    set -l rc $status
    set -g umask $saved
    return $rc
end

# _tmux_run_say TEXT [RUN]: shows TEXT once, on its own row above the prompt, printed before the
# prompt from the fish_prompt event, or else drawn by a handler. A notice about RUN replaces the one
# just drawn about the same run (its start), so a run leaves one row. Sets _tmux_run_redraw when
# what it drew waits for fish's repaint to put the line back (the helper's screen check must not
# look meanwhile: the handler answers context:redrawing).
function _tmux_run_say --description 'tmux-run: show a line above the prompt'
    set -e _tmux_run_redraw
    if set -q _tmux_run_in_prompt[1]
        printf '%s\n' $argv[1] >&2
        return 0
    end
    # The rows from the prompt's first row down to the cursor (_tmux_run_rows_up), then how many
    # the prompt alone fills, whether the line is empty (as fish last told) and the width of the
    # prompt's last line.
    set -l rows (_tmux_run_rows_up)
    set -l up $rows[1]
    set -l text $argv[1]
    # A run's notice keeps to one row (the next one about the run takes that row); others may wrap.
    set -l cols $COLUMNS
    test "$cols" -gt 0 2>/dev/null; or set cols 80
    test -n "$argv[2]"; and set text (string sub -l (math "max(1, $cols - 1)") -- $text)
    set -l k (math "max(1, ceil($(string length --visible -- $text) / $cols))" 2>/dev/null; or echo 1)
    set -l replace
    test -n "$argv[2]"; and test "$argv[2]" = "$_tmux_run_noticed"; and set replace 1
    set -g _tmux_run_noticed $argv[2]
    if test "$rows[3]" = 1; and test "$rows[4]" -lt $cols; and not commandline -P
        and test (math $up + $k) -lt "$LINES" 2>/dev/null
        # The line is empty and nothing is below it: the prompt and the line stay where they are,
        # untouched, and fish's picture of the screen stays true (it moves only relative to the
        # cursor), so no repaint is needed and the screen is the prompt as fish drew it at every
        # moment. The cursor's place is kept by DECSC/DECRC. A new row: the cursor goes down K
        # rows by index (the screen scrolls at its bottom, the top row into the scrollback), back
        # up K to where its text now is, saved; then up to the prompt's first row, K rows are
        # inserted there (the rows below move down, as far as they moved up), the text written in
        # them, and the cursor put back K rows below where it was saved.
        if set -q replace[1]
            # The row just above the prompt holds the run's first notice: written over. (Should
            # the screen have been cleared since, by ^L, that row is the prompt's: fish's repaint
            # draws the prompt again; until then it is what fish drew, so the screen check looks.)
            printf '\e7\e[%dA\r%s\e[K\e8' (math $up + 1) $text >&2
            commandline -f repaint
        else
            printf '%s\e[%dA\e7' (string repeat -n $k \eD) $k >&2
            test $up -gt 0; and printf '\e[%dA' $up >&2
            printf '\r\e[%dL%s\e8\e[%dB' $k $text $k >&2
        end
        return 0
    end
    # Otherwise fish's repaint goes back up from the cursor to its prompt's first row (the rows
    # between them: up); so the rows from there down are cleared, the notice takes the first, the
    # prompt as last rendered is drawn below it at once (fish's repaint may come only after the
    # helper has looked at the screen), and the cursor is left as far below its first row as fish
    # will go up to draw it again, with the line being typed. Until that repaint the screen shows
    # the prompt without the line: a zero-width U+2060 after it (a cell in tmux, which the repaint
    # clears) keeps the helper's screen check from taking that for an empty line, whichever
    # handler call it answers in.
    set -q replace[1]; and set up (math $up + 1)
    set -l move ''
    test $up -gt 0; and set move (printf '\e[%dA' $up)
    printf '%s\r\e[J%s\n%s\u2060' $move $text "$_tmux_run_left" >&2
    test $rows[1] -gt $rows[2]; and string repeat -N -n (math $rows[1] - $rows[2]) \n >&2
    set -g _tmux_run_redraw 1
    # (The rendering kept for answers stays: a prompt that renders otherwise now is compared once
    # more, rendered fresh, by the helper. A slow prompt is rendered by fish's repaint only.)
    commandline -f repaint
end

# _tmux_run_rows_up: prints how many rows fish's repaint goes up from the cursor to its prompt's
# first row (its reset_line: the left prompt's newlines, then the rows its last line and the line
# before the cursor fill), from the prompt the last answer rendered and the line as fish last told;
# then how many of those the prompt alone fills; then 1 when the line is empty (else 0); then the
# width of the prompt's last line.
function _tmux_run_rows_up --description 'tmux-run: rows from the prompt start to the cursor'
    set -q _tmux_run_left[1]; or _tmux_run_prompt
    set -l lines (string split \n -- "$_tmux_run_left")
    set -l cols $COLUMNS
    test "$cols" -gt 0 2>/dev/null; or set cols 80
    # fish 3 tells a handler the line one batch of keys late: just after Enter, the line it ran.
    set -l buffer (commandline -b | string collect)
    test "$buffer" = "$history[1]"; and set buffer ''
    set -l before (string sub -l (commandline -C) -- $buffer)
    set -l parts (string split \n -- "$lines[-1]$before")
    set -l rows (math (count $lines) + (count $parts) - 2)
    for w in (string length --visible -- $parts)
        set rows (math "$rows + floor($w / $cols)")
    end
    echo $rows
    set -l last (string length --visible -- "$lines[-1]")
    math (count $lines) - 1 + floor $last / $cols
    test -z "$buffer"; and echo 1; or echo 0
    echo $last
end

function _tmux_run_notify_on --description 'tmux-run: are notices on (TMUX_RUN_NOTIFY not off)'
    not contains -- "$TMUX_RUN_NOTIFY" off 0 no false
end

# _tmux_run_on_winch: the handler of the helper's wake (it replaces tmux-run.fish's, which reads
# this file when the helper first speaks), SIGURG (SIGWINCH too: a dormant pane's
# wake, src/enrollment/dormant.ts). SIGURG is ignored by default as SIGWINCH is, and nothing else
# in fish listens to it, so a wake does not run fish's own WINCH handler (under tmux it repaints
# the prompt, running the person's prompt functions, a `git` among them, at every WINCH) nor the
# person's (docs/shells.md). Acts only on
# what the helper left in the message file: its first line (R or E), a revocation (X), a
# request (Q NONCE [fresh]) not answered yet, a notice (N SEQ TEXT) not drawn yet. A real resize
# finds nothing new and does nothing. Prints nothing but a notice. The file is read whole by one
# `read` and its lines (in the order helper/shell/signal/signal.ts writes them) taken apart by one
# `string match`, whose named groups set the _tmux_run_m_ variables (local: no global has those
# names; a group named like a variable that exists sets that one, so never a name of the
# person's): each builtin or function a handler runs costs fish tens of microseconds, and a
# request is answered on the way of every run.
function _tmux_run_on_winch --on-signal SIGURG --on-signal SIGWINCH --description 'tmux-run: answer the helper'
    set -q _tmux_run_base[1]; or return 0
    if set -q _tmux_run_dormant[1]
        _tmux_run_wake_asked
        return 0
    end
    set -q _tmux_run_waking[1]; and _tmux_run_wake_pending
    set -q _tmux_run_waking[1]; and return 0
    # (A wake that failed ended the enrollment just now.)
    set -q _tmux_run_base[1]; and test -f $_tmux_run_base.msg; or return 0
    read -lz msg <$_tmux_run_base.msg
    string match -qr '^(?<_tmux_run_m_kind>[REXD])(?: (?<_tmux_run_m_rest>[^\n]*))?\n(?:Q (?<_tmux_run_m_nonce>[0-9a-f]{32})(?<_tmux_run_m_fresh> fresh)?\n)?(?:P [^\n]*\n)*(?:N (?<_tmux_run_m_seq>[0-9]+) (?<_tmux_run_m_note>(?:tmux-run: run (?<_tmux_run_m_run>\S+))?[^\n]*)\n)?(?:S (?<_tmux_run_m_said>[^\n]*)\n)?$' -- $msg
    or return 0
    switch $_tmux_run_m_kind
        case X
            _tmux_run_revoked
            return 0
        case D
            set -q _tmux_run_generation[1]; and set -g _tmux_run_dormant 1
            return 0
    end
    set -q _tmux_run_generation[1]; or _tmux_run_started (string trim -r -- "$_tmux_run_m_kind $_tmux_run_m_rest"); or return 0
    set -l drew
    test -n "$_tmux_run_m_said"; and _tmux_run_tell $_tmux_run_m_said; and set -q _tmux_run_redraw[1]; and set drew 1
    if set -q _tmux_run_m_seq[1]; and begin
            not set -q _tmux_run_seq[1]; or test $_tmux_run_m_seq -gt $_tmux_run_seq
        end
        set -g _tmux_run_seq $_tmux_run_m_seq
        _tmux_run_notify_on; and set -q _tmux_run_idle[1]; and _tmux_run_say "$_tmux_run_m_note" "$_tmux_run_m_run"
        and set -q _tmux_run_redraw[1]; and set drew 1
    end
    set -q _tmux_run_m_nonce[1]; and test "$_tmux_run_m_nonce" != "$_tmux_run_answered"; or return 0
    set -g _tmux_run_answered $_tmux_run_m_nonce
    set -q _tmux_run_m_fresh[1]; and set -e _tmux_run_drawn
    # A notice drew the prompt without the line being typed, which fish's repaint puts back only
    # after this handler: the screen is not to be read now (the helper asks again).
    set -l reason
    if set -q drew[1]
        set reason context:redrawing
    else if not set -q _tmux_run_idle[1]
        set reason busy
    else if commandline -P
        set reason context:completion
    else if commandline -S
        set reason context:search
    else if test -n "$TMUX_RUN_APPROVE"; and test "$TMUX_RUN_APPROVE" != auto
        set reason approval_unavailable
    else
        _tmux_run_prompt
        _tmux_run_snapshot $_tmux_run_m_nonce; and return 0
        set reason snapshot_failed
    end
    _tmux_run_write $_tmux_run_base.ans 'B %s %s\n' $_tmux_run_m_nonce $reason
    return 0
end

# _tmux_run_tell TEXT: the helper's word that the screen check cannot serve this prompt, said once
# (notices off or not): at once at the prompt, else at the next one. True when it drew it now.
function _tmux_run_tell --argument-names text --description 'tmux-run: say what the helper found, once'
    test "$text" = "$_tmux_run_told"; and return 1
    if not set -q _tmux_run_idle[1]
        set -g _tmux_run_tell_later $text
        return 1
    end
    set -g _tmux_run_told $text
    set -e _tmux_run_tell_later
    _tmux_run_say $text
end

# _tmux_run_started LINE: the helper's first line: R GENERATION ENROLLMENT (enrolled) or
# E REASON (it failed: said once, with the log kept). Returns 1 when the enrollment ended.
function _tmux_run_started --argument-names line --description 'tmux-run: the helper is ready, or failed'
    set -q _tmux_run_generation[1]; and return 0
    set -l f (string split ' ' -- $line)
    if test "$f[1]" = R
        if string match -qr '^[0-9a-f]{32}$' -- "$f[2]"; and string match -qr '^[0-9a-f]{32}$' -- "$f[3]"
            set -g _tmux_run_generation $f[2]
            set -g _tmux_run_enrollment $f[3]
            _tmux_run_report_mode
            return 0
        end
        _tmux_run_failed "the helper answered in a way this snippet does not understand"
    else
        _tmux_run_failed (string sub -s 3 -- $line)
    end
    return 1
end

# _tmux_run_failed REASON [WHAT]: the helper could not enroll this shell (or, WHAT said, be
# started again for it): stops it, undoes the enrollment but keeps the helper's log, and says why, once.
function _tmux_run_failed --argument-names reason what --description 'tmux-run: enrollment failed'
    set -l log $_tmux_run_base.log
    set -l pid $_tmux_run_helper_pid
    _tmux_run_teardown keep-log
    _tmux_run_stop $pid
    # (A refusal of the directory itself says all: no log left in a directory others can use.)
    test -s $log; and not string match -q -- (string replace -r '/[^/]*$' '' -- $log)' *' "$reason"; or begin
        command rm -f -- $log 2>/dev/null
        set log
    end
    set -l where
    test -n "$log"; and set where " (the helper's log: $log)"
    test -n "$what"; or set what "not enrolled"
    _tmux_run_say "tmux-run: $what: $reason$where"
end

# _tmux_run_was_revoked: true when the helper's last message was X (it revoked, then exited).
function _tmux_run_was_revoked --description 'tmux-run: did the helper say X'
    test -f $_tmux_run_base.msg; or return 1
    read -l line <$_tmux_run_base.msg
    test "$line" = X
end

function _tmux_run_revoked --description 'tmux-run: the enrollment was revoked'
    _tmux_run_teardown
    _tmux_run_notify_on; and _tmux_run_say "tmux-run: this pane's enrollment was revoked"
end

# _tmux_run_as_drawn FUNCTION: runs a prompt function with $status and $pipestatus as fish's reader
# gave them when it drew the prompt (the last command line's: prompts show both).
function _tmux_run_as_drawn --argument-names fn --description 'tmux-run: a prompt function as fish runs it'
    set -l codes $_tmux_run_pipestatus
    if set -q codes[2]; and string match -qr '^[0-9]+( [0-9]+)+$' -- "$codes"
        eval (string join ' | ' -- '_tmux_run_return '$codes)'; '$fn
    else
        _tmux_run_return $_tmux_run_status
        $fn
    end
end

function _tmux_run_return --argument-names code --description 'tmux-run: sets $status to CODE'
    return $code
end

# _tmux_run_prompt: sets _tmux_run_left to the left prompt (the mode indicator's lines joined,
# then fish_prompt's lines joined by newlines) and _tmux_run_right to the right prompt (its lines
# joined), as fish's reader builds them, with $status as it was after the last command (prompts
# show it); escape sequences are left in (the helper strips them). Rendered once per prompt: the
# screen shows the prompt as fish drew it at the prompt, and a run does not redraw it. Rendered
# again in another bind mode or width, and when the helper asks for it fresh (Q NONCE fresh: the
# screen did not show the prompt as rendered, after a repaint that drew it otherwise).
function _tmux_run_prompt --description 'tmux-run: the prompt as fish draws it'
    set -l key "$fish_bind_mode $COLUMNS"
    set -q _tmux_run_drawn[1]; and test "$_tmux_run_drawn" = "$key"; and return 0
    set -l mode
    functions -q fish_mode_prompt; and set mode (_tmux_run_as_drawn fish_mode_prompt | string join '')
    set -l left (_tmux_run_as_drawn fish_prompt | string collect)
    set -l right
    functions -q fish_right_prompt; and set right (_tmux_run_as_drawn fish_right_prompt | string join '')
    set -g _tmux_run_left "$mode$left"
    set -g _tmux_run_right "$right"
    set -g _tmux_run_drawn $key
end

# _tmux_run_snapshot NONCE: writes the snapshot, then at once the answer K NONCE with the prompt
# rendered (_tmux_run_left, _tmux_run_right): the snapshot is NONCE, PWD and the exported
# environment (NUL-separated, a list joined as fish exports it: with ':' for a path variable, a
# name that ends in PATH or one set with --path, with spaces otherwise; a quoted "$NAME" joins it
# so, in one step) in a new 0600 file, in one write; when TMUX_RUN_SANDBOX is set and not off,
# also the parameters the sandbox reads, exported or not, as :NAME=VALUE (a list joined with
# colons). The helper begins its screen read when the snapshot appears (fish's reader takes no
# key until this handler returns), so nothing but the answer's own write comes after it. The
# names exported and every value are read afresh at each answer (an export can change with no
# event this snippet could see: a key binding, another fish's universal variable, the person's
# own handlers); only the code that prints them is kept, made for the list of names it prints
# and made again when the names exported are another list (_tmux_run_env_define). Every local is
# prefixed: a local would hide the person's variable of the same name. Returns 1 when the
# snapshot cannot be made, or the answer not written.
function _tmux_run_snapshot --argument-names _tmux_run_nonce --description 'tmux-run: write the snapshot'
    # (A pipe between two builtins: a command substitution costs fish a thread, slow under load.)
    set --names -x | read -laz _tmux_run_names
    set -l _tmux_run_kv
    if test -n "$TMUX_RUN_SANDBOX"; and test "$TMUX_RUN_SANDBOX" != off
        for _tmux_run_n in TMUX_RUN_SANDBOX TMUX_RUN_SANDBOX_WRITE TMUX_RUN_SANDBOX_HIDE HOME XDG_CONFIG_HOME \
            XDG_RUNTIME_DIR SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS TMUX TMUX_TMPDIR
            set -q $_tmux_run_n; and set -a _tmux_run_kv ":$_tmux_run_n="(string join : -- $$_tmux_run_n)
        end
    end
    set -l _tmux_run_printer 1
    if not set -q _tmux_run_env_names[1]; or test "$_tmux_run_names" != "$_tmux_run_env_names"
        _tmux_run_env_define $_tmux_run_names; or set _tmux_run_printer
    end
    # A name the printer cannot be made for: each value in turn.
    set -l _tmux_run_env
    if not set -q _tmux_run_printer[1]
        for _tmux_run_n in $_tmux_run_names
            set -a _tmux_run_env "$_tmux_run_n=$$_tmux_run_n"
        end
    end
    set -l saved $umask
    set -g umask 0077
    if set -q _tmux_run_printer[1]
        _tmux_run_env_print $_tmux_run_nonce $_tmux_run_kv
    else
        printf '%s\0' $_tmux_run_nonce $PWD $_tmux_run_env $_tmux_run_kv >?$_tmux_run_base.env 2>/dev/null
        and printf 'K %s\n%s\0%s\0' $_tmux_run_nonce $_tmux_run_left $_tmux_run_right >$_tmux_run_base.ans 2>/dev/null
    end
    set -l rc $status
    set -g umask $saved
    return $rc
end

# _tmux_run_env_define NAMES...: defines _tmux_run_env_print NONCE [EXTRA...], which writes NONCE,
# PWD, NAME=VALUE for each of NAMES (its value as a quoted "$NAME" gives it: read when it runs)
# and EXTRA to a new snapshot file in one printf, then the answer K (_tmux_run_snapshot), and keeps NAMES (space-joined: a name has no
# space) in _tmux_run_env_names. Returns 1, defining nothing, when a name is not made only of
# letters, digits and underscores (it could not be written into code as it is).
function _tmux_run_env_define --description 'tmux-run: make the snapshot printer for the exported names'
    set -e _tmux_run_env_names
    functions -e _tmux_run_env_print
    set -l fields
    for n in $argv
        string match -qr '^[A-Za-z0-9_]+$' -- $n; or return 1
        set -a fields "\"$n=\$$n\""
    end
    eval "function _tmux_run_env_print --description 'tmux-run: print the snapshot'
        printf '%s\\0' \$argv[1] \$PWD $fields \$argv[2..-1] >?\$_tmux_run_base.env 2>/dev/null
        and printf 'K %s\\n%s\\0%s\\0' \$argv[1] \$_tmux_run_left \$_tmux_run_right >\$_tmux_run_base.ans 2>/dev/null
    end"
    set -g _tmux_run_env_names "$argv"
end

# _tmux_run_report_mode: the mode and sandbox the helper shows in listings, and whether notices
# are off, written when they changed (the shell itself decides at each run).
function _tmux_run_report_mode --description 'tmux-run: report the mode to the helper'
    set -q _tmux_run_generation[1]; or return 0
    set -l mode auto
    test -n "$TMUX_RUN_APPROVE"; and test "$TMUX_RUN_APPROVE" != auto; and set mode ask
    set -l sandbox off
    test -n "$TMUX_RUN_SANDBOX"; and set sandbox $TMUX_RUN_SANDBOX
    contains -- $sandbox off workspace workspace+net read-only; or set sandbox invalid
    # Notices off: the helper then does not wake the shell for them.
    set -l quiet ''
    _tmux_run_notify_on; or set quiet ' quiet'
    test "$mode $sandbox$quiet" = "$_tmux_run_mode_sent"; and return 0
    _tmux_run_write $_tmux_run_base.mode 'M %s %s%s\n' $mode $sandbox $quiet; and set -g _tmux_run_mode_sent "$mode $sandbox$quiet"
end

# _tmux_run_on_prompt_served STATUS PIPESTATUS...: the fish_prompt event (before the prompt is
# drawn, _tmux_run_on_prompt) once the helper runs: the shell is idle again; $status kept for the
# prompt the answer reports; a helper that is gone is said here.
function _tmux_run_on_prompt_served --description 'tmux-run: at each prompt'
    set -l last $argv
    set -q _tmux_run_helper_pid[1]; or return 0
    set -g _tmux_run_status $last[1]
    set -g _tmux_run_pipestatus $last[2..-1]
    set -g _tmux_run_idle 1
    set -g _tmux_run_in_prompt 1
    set -e _tmux_run_noticed _tmux_run_drawn
    set -q _tmux_run_tell_later[1]; and _tmux_run_tell $_tmux_run_tell_later
    if not set -q _tmux_run_generation[1]
        _tmux_run_starting
    else if set -q _tmux_run_dormant[1]
        _tmux_run_report_mode
    else if set -q _tmux_run_waking[1]
        _tmux_run_wake_pending
    else if _tmux_run_alive
        _tmux_run_report_mode
    else if _tmux_run_was_revoked
        _tmux_run_revoked
    else
        # Its last word may be D (dormant), not read yet: a command held the prompt.
        _tmux_run_on_winch
        if not set -q _tmux_run_dormant[1]; and set -q _tmux_run_base[1]
            _tmux_run_lost
        end
    end
    set -e _tmux_run_in_prompt
    return 0
end

# _tmux_run_starting: a prompt while the helper starts: its first line may be there (a WINCH not
# handled yet); a helper that is gone, or silent for 10 seconds, ends the attempt.
function _tmux_run_starting --description 'tmux-run: the helper is starting'
    if test -f $_tmux_run_base.msg
        read -l line <$_tmux_run_base.msg
        string match -q 'X*' -- $line; and begin
            _tmux_run_revoked
            return 0
        end
        _tmux_run_started $line; or return 0
        _tmux_run_alive; or _tmux_run_lost
        return 0
    end
    if _tmux_run_alive
        test (math (_tmux_run_uptime) - $_tmux_run_since) -lt 10; and return 0
        _tmux_run_failed "the helper did not become ready within 10 seconds"
        return 0
    end
    set -l reason
    test -r $_tmux_run_base.log; and set reason (string match -rv '^\s*$' <$_tmux_run_base.log 2>/dev/null)[-1]
    test -n "$reason"; or set reason "it printed nothing"
    set reason (string replace -r '^.*tmux-run-helper\[\d+\]: ' '' -- $reason)
    # At the far end, a login that is not a `tmux-run ssh` session: nothing to enroll, nothing to say.
    if set -q _tmux_run_remote[1]; and string match -q 'not a tmux-run ssh session*' -- $reason
        _tmux_run_teardown
        return 0
    end
    _tmux_run_failed "the helper exited before it was ready: "(string sub -l 300 -- $reason)
end

# _tmux_run_lost: the helper of this enrollment is gone (killed, crashed): says so once, undoes
# the enrollment, and starts the orphan sweep (src/broker/shell-sweep.ts) in the background,
# which stops the runs it held and removes the enrollment's record and socket.
function _tmux_run_lost --description 'tmux-run: the helper is gone'
    set -l pane (_tmux_run_pane_name)
    set -l dir (string replace -r '/[^/]*$' '' -- $_tmux_run_base)
    set -l enrollment $_tmux_run_enrollment
    set -l node $_tmux_run_node
    set -l root (string replace -r '/shell/[^/]*$' '' -- $_tmux_run_snippet)
    set -l sweep $root/dist/src/broker/shell-sweep-main.js
    if test -n "$enrollment"; and test -f $dir/$enrollment.json
        _tmux_run_teardown keep-record
        if test -r $sweep
            begin
                set -lx NODE_OPTIONS ''
                command $node -- $sweep $dir $enrollment </dev/null >/dev/null 2>&1 &
            end
            disown $last_pid 2>/dev/null
        else
            command rm -f -- $dir/$enrollment.json $dir/$enrollment.sock $dir/$enrollment.status 2>/dev/null
        end
    else
        _tmux_run_teardown
    end
    _tmux_run_say "tmux-run: the helper for $pane exited; this pane is no longer enrolled (source $_tmux_run_snippet to enroll it again)"
end

# _tmux_run_stop PID: ends a helper that must go, and waits until it has: 4 seconds to let a run
# it serves report its end (it allows itself 3), then it is killed.
function _tmux_run_stop --argument-names pid --description 'tmux-run: stop a helper'
    test -n "$pid"; and test -e /proc/$pid; or return 0
    command kill -TERM $pid 2>/dev/null
    set -l i 0
    while test $i -lt 80
        test -e /proc/$pid; or return 0
        _tmux_run_zombie $pid; and return 0
        command sleep 0.05
        set i (math $i + 1)
    end
    command kill -KILL $pid 2>/dev/null
    return 0
end

function _tmux_run_zombie --argument-names pid --description 'tmux-run: is PID a zombie'
    test -r /proc/$pid/stat; and read -l stat </proc/$pid/stat 2>/dev/null; or return 0
    test (string split -f1 ' ' -- (string replace -r '^.*\) ' '' -- $stat)) = Z
end

# _tmux_run_teardown [keep-log|keep-record]: undoes exactly what enrollment did (files, names);
# keep-log leaves the helper's log for the person to read, keep-record the record and socket for
# the orphan sweep. The helper removes its own files when it ends; removing them here as well
# covers a helper that was killed and could not.
function _tmux_run_teardown --argument-names keep --description 'tmux-run: undo the enrollment'
    if set -q _tmux_run_base[1]
        set -l files $_tmux_run_base.{msg,new,old,ans,mode,env,trap,wake}
        test "$keep" = keep-log; or set -a files $_tmux_run_base.log
        set -q _tmux_run_enrollment[1]; and test "$keep" != keep-record
        and set -a files (string replace -r '/[^/]*$' '' -- $_tmux_run_base)/$_tmux_run_enrollment.{json,sock}
        set -l there
        for f in $files
            test -e $f; or test -L $f; and set -a there $f
        end
        set -q there[1]; and command rm -f -- $there 2>/dev/null
    end
    set -e _tmux_run_helper_pid _tmux_run_base _tmux_run_generation _tmux_run_enrollment _tmux_run_node _tmux_run_held
    set -e _tmux_run_since _tmux_run_idle _tmux_run_answered _tmux_run_seq _tmux_run_mode_sent
    set -e _tmux_run_left _tmux_run_right _tmux_run_noticed _tmux_run_pipestatus _tmux_run_told _tmux_run_tell_later
    set -e _tmux_run_drawn _tmux_run_dormant _tmux_run_waking _tmux_run_env_names _tmux_run_redraw
    functions -e _tmux_run_env_print
    return 0
end

# _tmux_run_wake_asked: the SIGWINCH handler of a dormant shell: a request in BASE.wake, read once.
function _tmux_run_wake_asked --description 'tmux-run: a broker asks a dormant pane'
    test -f $_tmux_run_base.wake; or return 0
    set -l line
    read -l line <$_tmux_run_base.wake 2>/dev/null
    # Emptied, not removed: no fork in the handler (a foreground command would make the shell look busy).
    test -n "$line"; and printf '' >$_tmux_run_base.wake 2>/dev/null
    switch "$line"
        case U
            _tmux_run_wake
        case X
            _tmux_run_revoked
    end
    return 0
end

# _tmux_run_wake: starts the helper again as the first (_tmux_run_launch, with TMUX_RUN_NODE and
# TMUX_RUN_IDLE as they are now), naming the enrollment in its environment only. Once: the U of
# other brokers meanwhile finds it waking, or awake.
function _tmux_run_wake --description 'tmux-run: start a dormant pane helper again'
    set -q _tmux_run_dormant[1]; or return 0
    set -l node node
    set -q TMUX_RUN_NODE[1]; and test -n "$TMUX_RUN_NODE"; and set node $TMUX_RUN_NODE
    set -l root (string replace -r '/shell/[^/]*$' '' -- $_tmux_run_snippet)
    _tmux_run_launch $_tmux_run_base $root/dist/helper/main.js $node $_tmux_run_enrollment
    set -g _tmux_run_node $node
    set -g _tmux_run_waking 1
    # The new helper numbers its notices from 1 again.
    set -e _tmux_run_dormant _tmux_run_seq
end

# _tmux_run_wake_pending: while the woken helper starts: its first word R with this enrollment's
# generations (awake again), or an E line, a helper gone, or one silent for 10 seconds (the
# enrollment ends, said once: _tmux_run_failed, its log kept).
function _tmux_run_wake_pending --description 'tmux-run: the woken helper is starting'
    set -l line
    test -f $_tmux_run_base.msg; and read -l line <$_tmux_run_base.msg
    if test "$line" = "R $_tmux_run_generation $_tmux_run_enrollment"
        set -e _tmux_run_waking _tmux_run_mode_sent
        _tmux_run_report_mode
        return 0
    end
    set -l why
    if string match -q 'R *' -- $line
        set why "the helper answered in a way this snippet does not understand"
    else if string match -q 'E *' -- $line
        set why (string sub -s 3 -- $line)
    else if _tmux_run_alive
        test (math (_tmux_run_uptime) - $_tmux_run_since) -lt 10; and return 0
        set why "the helper did not become ready within 10 seconds"
    else
        set -l reason
        test -r $_tmux_run_base.log; and set reason (string match -rv '^\s*$' <$_tmux_run_base.log 2>/dev/null)[-1]
        test -n "$reason"; or set reason "it printed nothing"
        set why "the helper exited before it was ready: "(string sub -l 300 -- (string replace -r '^.*tmux-run-helper\[\d+\]: ' '' -- $reason))
    end
    _tmux_run_failed $why "the helper for "(_tmux_run_pane_name)" could not be started again, so the pane is no longer enrolled (source $_tmux_run_snippet to enroll it again)"
end

# tmux_run_unenroll: ends this pane's enrollment. Returns 0, or 1 when it was not enrolled.
function tmux_run_unenroll --description 'tmux-run: end this pane enrollment'
    if set -q _tmux_run_held[1]
        # (Its helper not started yet: nothing to stop.)
        set -l pane (_tmux_run_pane_name)
        _tmux_run_teardown
        echo "tmux-run: $pane unenrolled"
        return 0
    end
    if not set -q _tmux_run_helper_pid[1]
        echo "tmux-run: this shell is not enrolled" >&2
        return 1
    end
    set -l pane (_tmux_run_pane_name)
    set -l pid $_tmux_run_helper_pid
    # Dormant: no helper to stop (its pid may be another process's by now).
    set -q _tmux_run_dormant[1]; and set pid
    # The helper removes its record first thing on SIGTERM.
    test -n "$pid"; and command kill -TERM $pid 2>/dev/null
    _tmux_run_teardown
    _tmux_run_stop $pid
    echo "tmux-run: $pane unenrolled"
end
