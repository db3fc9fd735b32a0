// The facts a sandbox plan needs, gathered at dispatch (the impure step before the pure
// sandboxArgs): each path's real path and kind, and the git repositories in the writable trees —
// the cwd's own (found upwards), those a writable tree lies in, and every one below them (`.git`
// entries and bare repositories: a bounded search, see REPO_SEARCH).
import { lstatSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  planPaths,
  within,
  type EntryKind,
  type GitRepo,
  type PathFact,
  type SandboxFacts,
  type SandboxPlan,
} from './policy.js';
import { fsPath, isGitDir, Listings } from './listings.js';

/**
 * The search for repositories below a writable tree: breadth first, symlinks never followed,
 * `.git` never entered; below a directory named in `shallow` (package stores and caches, huge and
 * rarely a place anyone commits, but where a git dependency or an editable install keeps its
 * checkout) only `shallowDepth` levels deep; after `maxDirs` directories read it gives up and the
 * run is refused (a repository it did not see could not be locked).
 */
export const REPO_SEARCH = {
  maxDirs: 20000,
  shallow: new Set(['node_modules', '.venv', 'venv', '__pycache__', '.tox', '.mypy_cache', '.pytest_cache', '.cache']),
  shallowDepth: 3,
};

/** What one decision learned of paths already (their facts are asked many times: every hidden path has the same parents). */
export type FactMemo = Map<string, PathFact>;

/**
 * The real path of `p` (for a missing path: its nearest existing parent's, plus the rest) and its
 * kind. `memo` holds the facts found so far in the same decision.
 */
export function pathFact(p: string, memo: FactMemo = new Map()): PathFact {
  const known = memo.get(p);
  if (known) return known;
  const fact = resolveFact(p, memo);
  memo.set(p, fact);
  return fact;
}

function resolveFact(p: string, memo: FactMemo): PathFact {
  let st: Stats | undefined;
  let present = true;
  try {
    st = lstatSync(fsPath(p), { throwIfNoEntry: false });
    present = st !== undefined;
  } catch {
    // unreadable on the way: realpath tells
  }
  // Missing outright: no realpath walk that can only fail; the parent's fact instead.
  if (present) {
    try {
      const real = realpathSync.native(fsPath(p), { encoding: 'buffer' }).toString('latin1');
      // A path that is its own real path is no symlink: what lstat saw is what stat would.
      if (real === p && st && !st.isSymbolicLink()) return { real, kind: st.isDirectory() ? 'dir' : 'file' };
      let kind: PathFact['kind'] = 'missing';
      try {
        kind = statSync(fsPath(real)).isDirectory() ? 'dir' : 'file';
      } catch {
        // gone in between
      }
      return { real, kind };
    } catch {
      // a dangling symlink, or a part that cannot be read: as a missing path
    }
  }
  const parent = dirname(p);
  if (parent === p) return { real: p, kind: 'missing' };
  return { real: join(pathFact(parent, memo).real, basename(p)), kind: 'missing' };
}

function entryKind(p: string): EntryKind {
  try {
    const st = lstatSync(fsPath(p), { throwIfNoEntry: false });
    if (!st) return 'missing';
    return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file';
  } catch {
    return 'missing';
  }
}

/** What a gitlink file (`gitdir: PATH`) points at, resolved; undefined when it says nothing usable. */
function gitlinkTarget(file: string, memo: FactMemo): string | undefined {
  try {
    const m = /^gitdir: *(.+?)\s*$/m.exec(readFileSync(fsPath(file)).toString('latin1').slice(0, 4096));
    return m?.[1] ? pathFact(resolve(dirname(file), m[1]), memo).real : undefined;
  } catch {
    return undefined;
  }
}

class RepoSet {
  readonly dirs = new Set<string>();
  readonly links: { path: string; symlink: boolean }[] = [];

  constructor(private readonly memo: FactMemo) {}

  /** A `.git` entry found at `p` (real path of its directory plus `.git`). */
  entry(p: string, kind: EntryKind): void {
    if (kind === 'dir') this.dirs.add(p);
    else if (kind === 'file') {
      this.links.push({ path: p, symlink: false });
      const target = gitlinkTarget(p, this.memo);
      if (target) this.dirs.add(target);
    } else if (kind === 'link') {
      this.links.push({ path: p, symlink: true });
      const target = pathFact(p, this.memo);
      if (target.kind === 'dir') this.dirs.add(target.real);
    }
  }
}

/** Whether the directory `dir` is itself a git directory (looked at with lstat, without reading it). */
function gitDirAt(dir: string): boolean {
  const kind = (n: string): 'dir' | 'other' | undefined => {
    const k = entryKind(join(dir, n));
    return k === 'missing' ? undefined : k === 'dir' ? 'dir' : 'other';
  };
  const names = new Map<string, 'dir' | 'other'>();
  for (const n of ['HEAD', 'objects', 'refs']) {
    const k = kind(n);
    if (k) names.set(n, k);
  }
  return isGitDir(names);
}

/** Breadth-first search of `root` for `.git` entries and bare repositories; false when it gave up. */
function searchTree(
  root: string,
  repos: RepoSet,
  visited: Set<string>,
  budget: { left: number },
  listings: Listings,
): boolean {
  listings.tree(root);
  // Each directory with how many more levels may be read below it (Infinity: no bound).
  const queue: [string, number][] = [[root, Infinity]];
  for (let i = 0; i < queue.length; i++) {
    const [dir, depth] = queue[i]!;
    if (visited.has(dir)) continue;
    visited.add(dir);
    if (--budget.left < 0) return false;
    const l = listings.read(dir);
    if (!l) continue; // unreadable: the run cannot write there either
    if (l.gitDir) {
      repos.dirs.add(dir); // a bare repository (or a git directory named otherwise): locked whole
      continue;
    }
    const at = (name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
    if (l.git) repos.entry(at('.git'), l.git);
    if (depth <= 1) continue;
    for (const name of l.subdirs)
      queue.push([at(name), REPO_SEARCH.shallow.has(name) ? Math.min(depth - 1, REPO_SEARCH.shallowDepth) : depth - 1]);
  }
  return true;
}

/** Each path of `plan` with its real path and kind. */
export function pathFacts(plan: SandboxPlan, memo: FactMemo = new Map()): Map<string, PathFact> {
  const paths = new Map<string, PathFact>();
  for (const p of planPaths(plan)) paths.set(p, pathFact(p, memo));
  return paths;
}

/** Gathers the facts for `plan`: resolves its paths, finds the repositories its writable trees hold. */
export function gatherFacts(
  plan: SandboxPlan,
  maxDirs = REPO_SEARCH.maxDirs,
  memo: FactMemo = new Map(),
  paths: ReadonlyMap<string, PathFact> = pathFacts(plan, memo),
  listings: Listings = new Listings(),
): SandboxFacts {
  const repos = new RepoSet(memo);
  // The cwd's own repository, found upwards; and any git directory a writable tree lies in (the
  // cwd at .git/hooks, a TMUX_RUN_SANDBOX_WRITE naming a .git): such a tree is refused.
  const cwd = paths.get(plan.cwd)?.real ?? plan.cwd;
  for (let d = cwd; ; d = dirname(d)) {
    const k = entryKind(join(d, '.git'));
    if (k !== 'missing') {
      repos.entry(join(d, '.git'), k);
      break;
    }
    if (d === dirname(d)) break;
  }
  for (const w of plan.writable) {
    const real = paths.get(w.path);
    if (real === undefined || real.kind === 'missing') continue;
    for (let d = real.real; d !== dirname(d); d = dirname(d)) {
      if (basename(d) === '.git' || gitDirAt(d)) repos.dirs.add(d);
    }
  }
  for (const g of plan.gitDirs) {
    const f = pathFact(g, memo);
    if (f.kind === 'dir') repos.dirs.add(f.real);
  }
  const budget = { left: maxDirs };
  const visited = new Set<string>();
  let gaveUp: number | undefined;
  const roots = plan.writable
    .map((w) => paths.get(w.path))
    .filter((f): f is PathFact => f !== undefined && f.kind === 'dir');
  for (const r of roots) {
    if (!searchTree(r.real, repos, visited, budget, listings)) {
      gaveUp = maxDirs;
      break;
    }
  }
  listings.done();
  const found: GitRepo[] = [...repos.dirs]
    .filter((d) => roots.some((r) => within(d, r.real) || within(r.real, d)))
    .map((dir) => ({ dir }));
  return {
    paths,
    repos: found,
    gitLinks: repos.links,
    ...(gaveUp !== undefined ? { searchGaveUp: gaveUp } : {}),
  };
}
