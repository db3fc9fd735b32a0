// The directory listings the repository search (helper/walls/facts.ts) read, kept from one run's
// decision to the next: a directory whose inode, change time and modification time are what they
// were when it was read lists the same entries (creating, removing or renaming an entry changes
// both times, and no one can set a change time back), so it is not read again. What counts:
//   - A listing is kept only when its directory's times are SETTLE_MS older than the search:
//     file systems stamp times with a coarse clock, and a change made in the same tick as the
//     read could leave them as they were.
//   - Only on local file systems whose times the kernel stamps (LOCAL_FS), and only for
//     directories on the same device as the searched tree's root: a network file system stamps
//     with its server's clock.
//   - What a `.git` file says is not kept: facts.ts reads it at every decision.
import { lstatSync, readdirSync, statfsSync } from 'node:fs';

/** What the search needs of a directory: whether it is a git directory, its `.git` entry, its subdirectories. */
export interface Listing {
  /** HEAD, objects/ and refs/ are in it (a bare repository, or a git directory by any name). */
  gitDir: boolean;
  /** Its `.git` entry, if any. */
  git?: 'dir' | 'file' | 'link';
  /** The names of its subdirectories (symlinks not followed). */
  subdirs: string[];
}

interface Kept extends Listing {
  dev: bigint;
  ino: bigint;
  ctimeNs: bigint;
  mtimeNs: bigint;
}

/** A git directory as git itself recognises one: HEAD, objects/ and refs/ (a `.git` or a bare repository). */
export function isGitDir(names: ReadonlyMap<string, 'dir' | 'other'>): boolean {
  return names.has('HEAD') && names.get('objects') === 'dir' && names.get('refs') === 'dir';
}

/** How much older than the search a directory's times must be for its listing to be kept. */
export const SETTLE_MS = 3000;

/** statfs(2) types whose times this kernel stamps: ext2-4, xfs, btrfs, tmpfs, overlay, zfs, f2fs, bcachefs. */
const LOCAL_FS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e]);

/** A path of the plan (latin1: one character per byte) as the file system takes it. */
export const fsPath = (p: string): Buffer => Buffer.from(p, 'latin1');

/** The listings of the last search (every directory it read and could keep), by real path. */
let kept = new Map<string, Kept>();
/** How many directories the last decision's search read, and how many it took from the listings kept. */
export const lastSearch = { read: 0, reused: 0 };

/** One decision's view of the listings: reuses what is unchanged, keeps what it reads for the next. */
export class Listings {
  private readonly next = new Map<string, Kept>();
  private readonly settled: bigint;
  /** The device of the tree being searched, when its file system is local; listings elsewhere are not kept. */
  private dev: bigint | undefined;

  /** `now`: the decision's time (ms since the epoch). */
  constructor(now: number = Date.now()) {
    this.settled = BigInt(Math.floor(now - SETTLE_MS)) * 1_000_000n;
    lastSearch.read = 0;
    lastSearch.reused = 0;
  }

  /** The search of the tree at `root` (a real path) begins. */
  tree(root: string): void {
    this.dev = undefined;
    try {
      if (LOCAL_FS.has(statfsSync(fsPath(root)).type)) this.dev = lstatSync(fsPath(root), { bigint: true }).dev;
    } catch {
      // unknown: nothing of it is kept
    }
  }

  /** The listing of `dir`, or undefined when it cannot be read (or is no directory now). */
  read(dir: string): Listing | undefined {
    let st;
    try {
      st = lstatSync(fsPath(dir), { bigint: true, throwIfNoEntry: false });
    } catch {
      return undefined;
    }
    if (!st?.isDirectory()) return undefined;
    const old = kept.get(dir);
    if (old && old.dev === st.dev && old.ino === st.ino && old.ctimeNs === st.ctimeNs && old.mtimeNs === st.mtimeNs) {
      lastSearch.reused += 1;
      this.next.set(dir, old);
      return old;
    }
    let entries;
    try {
      entries = readdirSync(fsPath(dir), { withFileTypes: true, encoding: 'buffer' });
    } catch {
      return undefined; // unreadable: the run cannot write there either
    }
    lastSearch.read += 1;
    const listing: Listing = { gitDir: false, subdirs: [] };
    const names = new Map<string, 'dir' | 'other'>();
    for (const e of entries) {
      const name = (e.name as unknown as Buffer).toString('latin1');
      const isDir = e.isDirectory();
      names.set(name, isDir ? 'dir' : 'other');
      if (name === '.git') listing.git = e.isSymbolicLink() ? 'link' : isDir ? 'dir' : 'file';
      else if (isDir) listing.subdirs.push(name);
    }
    listing.gitDir = isGitDir(names);
    // Read after the stat: a change in between leaves newer times, so the next search reads it again.
    if (st.dev === this.dev && st.ctimeNs < this.settled && st.mtimeNs < this.settled)
      this.next.set(dir, { ...listing, dev: st.dev, ino: st.ino, ctimeNs: st.ctimeNs, mtimeNs: st.mtimeNs });
    return listing;
  }

  /** The decision's search is over: what it read and reused is what the next one may reuse. */
  done(): void {
    kept = this.next;
  }
}
