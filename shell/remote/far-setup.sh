# The far end's side of `tmux-run setup --remote` (src/remote/setup-remote.ts sends it as the
# argument of one `ssh DEST sh -c ...`, with the install's tar on stdin): runs as the remote user,
# in their own directories only. MODE is install, undo or dry-run. Prints `tmux-run-setup: KEY=VALUE`
# lines for the local side to record; errors go to stderr with status 3.
set -eu
umask 077
fail() { printf 'tmux-run-setup: error: %s\n' "$*" >&2; exit 3; }
say() { printf 'tmux-run-setup: %s\n' "$*"; }
[ "$(uname -s)" = Linux ] || fail "this host runs $(uname -s); the far end needs Linux"
case ${HOME:-} in /*) ;; *) fail 'HOME is not an absolute path here' ;; esac
data=${XDG_DATA_HOME:-$HOME/.local/share}
case $data in /*) ;; *) data=$HOME/.local/share ;; esac
base=$data/tmux-run
app=$base/app
# Each session's socket is FWD/32-hex.sock: kept under 100 bytes (a Unix socket's path is at most 107).
fwd=$base/f
[ "$(printf %s "$fwd" | wc -c)" -le 62 ] || fwd=/tmp/tmux-run-fwd-$(id -u)
login=${SHELL##*/}
case $login in
  zsh) rc=${ZDOTDIR:-$HOME}/.zshrc ;;
  bash) rc=$HOME/.bashrc ;;
  fish) rc=${XDG_CONFIG_HOME:-$HOME/.config}/fish/conf.d/tmux-run-remote.fish ;;
  *) rc= ;;
esac
node=$(command -v node 2>/dev/null || true)
nodeok=no
[ -n "$node" ] && "$node" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null && nodeok=yes
begin='# >>> tmux-run remote (tmux-run setup --remote) >>>'
end='# <<< tmux-run remote <<<'
unblock() { [ -f "$1" ] && grep -qxF "$begin" "$1" && sed -i "/^# >>> tmux-run remote (tmux-run setup --remote) >>>\$/,/^# <<< tmux-run remote <<<\$/d" "$1"; return 0; }

if [ "$MODE" = dry-run ]; then
  say "would install into $app (forward directory $fwd)"
  say "login shell: $login; start-up file: ${rc:-none}"
  [ "$nodeok" = yes ] && say "node: $node ($("$node" --version))" || say "node: none of version 20 or newer on PATH: the far end could not start its helper"
  command -v cc >/dev/null 2>&1 && say 'compiler: cc (the native parts would be built here)' || say 'compiler: none (no native parts: Node spawn, perl peer credentials, the screen check for bash)'
  exit 0
fi
if [ "$MODE" = undo ]; then
  for f in "${ZDOTDIR:-$HOME}/.zshrc" "$HOME/.bashrc"; do unblock "$f"; done
  rm -f "${XDG_CONFIG_HOME:-$HOME/.config}/fish/conf.d/tmux-run-remote.fish"
  rm -rf "$app" "$base/app.new."* "$fwd"
  rmdir "$base" 2>/dev/null || true
  say "removed=$app"
  exit 0
fi

mkdir -p "$base"
chmod 700 "$base"
new=$base/app.new.$$
rm -rf "$new"
mkdir "$new"
tar -C "$new" -xf -
mkdir -p "$new/generated"
cp "$new/dist/generated/build-id.cjs" "$new/generated/build-id.cjs"
native=
if [ "$nodeok" = yes ] && command -v cc >/dev/null 2>&1; then
  (cd "$new" && "$node" scripts/build-native.mjs >"$new/build-native.log" 2>&1) || true
fi
for p in spawn.node walls-waiter fd-channel.node peer-cred.node bash-line.so; do
  [ -e "$new/dist/generated/$p" ] && native="$native $p"
done
rm -rf "$base/app.old"
[ -e "$app" ] && mv "$app" "$base/app.old"
mv "$new" "$app"
rm -rf "$base/app.old"
if [ -L "$fwd" ] || { [ -e "$fwd" ] && [ ! -O "$fwd" ]; }; then fail "$fwd is not a directory of yours"; fi
mkdir -p "$fwd"
chmod 700 "$fwd"
# The start-up line: it enrolls only in a session started by `tmux-run ssh` (the file it sources
# returns at once, silently, in any other).
case $login in
  zsh)
    unblock "$rc"
    printf '%s\n%s\n%s\n' "$begin" "[[ -r '$app/shell/remote/tmux-run-remote.zsh' ]] && source '$app/shell/remote/tmux-run-remote.zsh' '$fwd'" "$end" >>"$rc"
    say "rc=$rc"
    ;;
  bash)
    # ~/.bashrc: an interactive bash reads it, and an ssh login bash reads it through the login
    # file that sources it (stock ones do); said when the first login file bash would read does not.
    unblock "$rc"
    printf '%s\n%s\n%s\n' "$begin" "[[ -r '$app/shell/remote/tmux-run-remote.bash' ]] && source '$app/shell/remote/tmux-run-remote.bash' '$fwd'" "$end" >>"$rc"
    say "rc=$rc"
    for f in .bash_profile .bash_login .profile ''; do
      [ -z "$f" ] && { say "rc_note=a login bash reads none of ~/.bash_profile, ~/.bash_login, ~/.profile here, so not ~/.bashrc: make one that sources ~/.bashrc"; break; }
      [ -e "$HOME/$f" ] || continue
      grep -q 'bashrc' "$HOME/$f" || say "rc_note=a login bash reads ~/$f here, which does not source ~/.bashrc: add '. ~/.bashrc' to it"
      break
    done
    ;;
  fish)
    # A file of its own in conf.d (fish reads it before config.fish): --undo removes it.
    mkdir -p "${rc%/*}"
    printf '%s\n%s\n%s\n' "$begin" "test -r '$app/shell/remote/tmux-run-remote.fish'; and source '$app/shell/remote/tmux-run-remote.fish' '$fwd'" "$end" >"$rc"
    say "rc=$rc"
    ;;
  *) say "rc=" ;;
esac
say "remote_dir=$app"
say "forward_dir=$fwd"
say "build=$(sed -n 's/.*BUILD_ID = "\([0-9a-f]*\)".*/\1/p' "$app/dist/generated/build-id.cjs")"
say "hostname=$(cat /proc/sys/kernel/hostname 2>/dev/null || uname -n)"
say "node=$([ "$nodeok" = yes ] && printf %s "$node")"
say "native=${native# }"
say "shell=$login"
