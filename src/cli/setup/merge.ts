// What merging an entry into a client's file gives, whatever the file's format.

export interface MergeResult {
  /** `added`: no entry before; `updated`: an entry with other values was changed; `unchanged`: already set up. */
  status: 'added' | 'updated' | 'unchanged';
  /** The file's new text (the same text when unchanged). */
  text: string;
  /** The entry that was there before, if any. */
  previous: unknown;
  /** The whole file was written anew from its parsed value (its comments and layout are gone). */
  rewritten?: boolean;
}

/** The file cannot be read as its client reads it: setup changes nothing. The message says why. */
export class ConfigError extends Error {}
