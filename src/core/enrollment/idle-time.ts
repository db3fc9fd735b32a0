// TMUX_RUN_IDLE: how long a pane's helper may have nothing to do before it lets itself go (its
// pane stays enrolled, listed `dormant`, and the next call that needs it starts it again from the
// shell's side: docs/light.md). The shell passes its value to the helper each time it starts one.

/** What a listing's `sleeps_after` says of a helper that never goes dormant (`off`; a far helper). */
export const NEVER_SLEEPS = 'never';

/** The idle time when TMUX_RUN_IDLE is unset or empty: ten minutes. */
export const DEFAULT_IDLE_MS = 10 * 60_000;
/** The longest idle time accepted (a week); longer is as good as `off` and is refused as a mistake. */
export const MAX_IDLE_MS = 7 * 24 * 3_600_000;

/** What a value means: milliseconds, or null for `off` (the helper stays up); `problem` when it was not understood (the default is used). */
export interface IdleTime {
  ms: number | null;
  problem?: string;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses TMUX_RUN_IDLE (pure): `off` (also `0`, `no`, `false`, `never`), whole seconds (`90`), or a
 * duration of whole numbers with units s, m, h (`10m`, `1h30m`, `45s`), at least one second and at
 * most a week. Anything else is a problem said once, and the default is used.
 */
export function parseIdle(value: string | undefined): IdleTime {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '') return { ms: DEFAULT_IDLE_MS };
  if (['off', '0', 'no', 'false', 'never'].includes(v)) return { ms: null };
  let ms: number | undefined;
  if (/^[0-9]{1,9}$/.test(v)) ms = Number(v) * 1000;
  else if (/^(?:[0-9]{1,9}[hms])+$/.test(v)) {
    const units = [...v.matchAll(/([0-9]+)([hms])/g)].map((m) => m[2]);
    // Each unit once, largest first (1h30m, not 30m1h or 1m1m).
    if (units.join('') === ['h', 'm', 's'].filter((u) => units.includes(u)).join(''))
      ms = [...v.matchAll(/([0-9]+)([hms])/g)].reduce((sum, m) => sum + Number(m[1]) * UNIT_MS[m[2]!]!, 0);
  }
  const shown = JSON.stringify((value ?? '').slice(0, 40));
  if (ms === undefined)
    return {
      ms: DEFAULT_IDLE_MS,
      problem: `TMUX_RUN_IDLE=${shown} is not seconds, a duration like 10m or 1h30m, or off; using ${formatIdle(DEFAULT_IDLE_MS)}`,
    };
  if (ms < 1000 || ms > MAX_IDLE_MS)
    return {
      ms: DEFAULT_IDLE_MS,
      problem: `TMUX_RUN_IDLE=${shown} is outside 1s to 168h (use off to keep the helper up); using ${formatIdle(DEFAULT_IDLE_MS)}`,
    };
  return { ms };
}

/** An idle time as a person writes it: `10m`, `1h30m`, `45s` (pure). */
export function formatIdle(ms: number): string {
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}
