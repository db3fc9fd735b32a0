// The perl the helper's small programs run under (the sandbox's waiter, the exact-bytes exec
// wrapper): Debian's essential perl-base, at its fixed path (never the person's PATH).
export const PERL = '/usr/bin/perl';
