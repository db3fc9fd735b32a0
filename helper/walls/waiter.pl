# The walls' waiter in perl, the fallback where the C one (walls-waiter.c) is not built: run as
# `perl -e PROGRAM SOCKET PRCTL` (helper/walls/waiter.ts reads this file; the protocol is said there).
use strict; use Socket; use POSIX ();
my ($path, $prctl) = @ARGV;
open(my $c, "+<&=", 3) or exit 125; fcntl($c, 2, 1) or exit 125; syswrite($c, "R") or exit 125;
$SIG{ALRM} = sub { print STDERR "tmux-run: this pane's helper did not answer the sandbox\n"; exit 125 }; alarm 10;
my $g = ""; (sysread($c, $g, 1) // 0) == 1 && $g eq "G" or exit 125; alarm 0;
$SIG{ALRM} = "DEFAULT"; $SIG{CHLD} = "IGNORE"; $SIG{PIPE} = "IGNORE";
sub readn { my ($f, $n) = @_; my $x = ""; while (length($x) < $n) { my $r = sysread($f, $x, $n - length $x, length $x);
  if (!defined $r) { next if $!{EINTR}; return undef } return undef if $r == 0 } $x }
sub put { my ($f, $x) = @_; while (length $x) { my $n = syswrite($f, $x); if (!defined $n) { next if $!{EINTR}; return 0 } substr($x, 0, $n) = "" } 1 }
sub take { my $f = shift; my $x = ""; while (1) { my $r = sysread($f, $x, 65536, length $x); if (!defined $r) { next if $!{EINTR}; return undef } last if $r == 0 } $x }
sub kids { my @k; opendir(my $d, "/proc") or return; for my $p (readdir $d) { next unless $p =~ /^\d+$/;
  open(my $f, "<", "/proc/$p/stat") or next; my $l = <$f> // next; push @k, $p if $l =~ /\) \S+ (\d+)/ && $1 == $$ } @k }
sub link_to { my $k = shift; my $x; socket($x, AF_UNIX, SOCK_STREAM, 0) && connect($x, pack_sockaddr_un($path)) && put($x, $k) ? $x : undef }
sub shell_to_be { my ($t, $reaper, $fail) = @_;
  syscall($prctl, 1, 9, 0, 0, 0) == 0 && getppid() == $reaper or POSIX::_exit(125);
  my $out = link_to($t . "o\n") or POSIX::_exit(125); my $err = link_to($t . "e\n") or POSIX::_exit(125); POSIX::setsid();
  my $n = readn($out, 8); POSIX::_exit(0) unless defined $n; $n =~ /^[0-9a-f]{8}$/ or POSIX::_exit(125);
  my $req = readn($out, hex $n); POSIX::_exit(125) unless defined $req; shutdown($out, 0); put($out, "A") or POSIX::_exit(125);
  my ($inp, $um, $cwd, $script, @env) = split(/\0/, $req, -1); pop @env if @env && $env[-1] eq "";
  defined $script or do { put($fail, "E 22\n"); POSIX::_exit(125) }; my $i;
  if ($inp eq "p") { $i = link_to($t . "i\n") or do { put($fail, "I " . ($! + 0) . "\n"); POSIX::_exit(125) }; shutdown($i, 1) }
  elsif ($inp ne "") { put($fail, ($inp =~ /^t/ ? "T" : "I") . " 95\n"); POSIX::_exit(125) }
  umask(oct $um) if $um ne "";
  chdir($cwd) or do { put($fail, "C " . ($! + 0) . "\n"); POSIX::_exit(125) };
  %ENV = map { my $i = index($_, "="); (substr($_, 0, $i), substr($_, $i + 1)) } grep { index($_, "=") > 0 } @env;
  $i ? open(STDIN, "<&", $i) : open(STDIN, "<", "/dev/null"); open(STDOUT, ">&", $out); open(STDERR, ">&", $err);
  exec { "/bin/sh" } "/bin/sh", "-c", $script; put($fail, "E " . ($! + 0) . "\n"); POSIX::_exit(127) }
sub reaper { my $t = shift; $SIG{CHLD} = "DEFAULT"; $SIG{PIPE} = "DEFAULT";
  syscall($prctl, 36, 1, 0, 0, 0) == 0 or exit 125; pipe(my $fr, my $fw) or exit 125; my $self = $$;
  my $p = fork; exit 125 unless defined $p; if (!$p) { close $fr; shell_to_be($t, $self, $fw) } close $fw;
  my $st = link_to($t . "s\n") or do { kill 9, $p; exit 125 }; $SIG{PIPE} = "IGNORE"; put($st, "S $p\n"); my $w = 0;
  while (1) { my $k = waitpid(-1, 0); if ($k == $p) { $w = $?; last } last if $k == -1 && !$!{EINTR} }
  my $e = take($fr) // ""; put($st, $e) if $e =~ /^[CE] \d+\n$/;
  while (1) { my $r = waitpid(-1, 1); last if $r == -1; next if $r > 0; my @k = kids();
    if (!@k) { select(undef, undef, undef, 0.001); next } kill 9, @k; my $n = 0; $n++ while waitpid(-1, 1) > 0;
    select(undef, undef, undef, 0.001) unless $n }
  put($st, "W $w\n"); exit 0 }
while (1) { my $m = readn($c, 34) // exit 0; $m =~ /^P([0-9a-f]{32})\n$/ or exit 125; my $t = $1; my $p = fork;
  if (!defined $p) { put($c, "F$t\n"); next } if (!$p) { close $c; reaper($t) } }
