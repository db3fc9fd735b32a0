// The repository search's listings kept between decisions (helper/walls/listings.ts), on a real
// tree: what is unchanged is not read again, and every change that could bring a repository in
// is seen at the next decision. The tree is fresh, so each search is given a clock SETTLE_MS
// ahead (as if the tree had been made long before); one test keeps the real clock.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatherFacts } from '../../helper/walls/facts.js';
import { lastSearch, Listings, SETTLE_MS } from '../../helper/walls/listings.js';
import type { SandboxPlan } from '../../helper/walls/policy.js';

const root = mkdtempSync(join(tmpdir(), 'sandbox-listings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A workspace plan for `proj` (only what the search reads: the cwd and the one writable tree). */
const planFor = (proj: string): SandboxPlan =>
  ({
    value: 'workspace',
    cwd: proj,
    writable: [{ path: proj, from: 'cwd' }],
    hidden: [],
    readOnly: [],
    homes: [],
    gitDirs: [],
  }) as unknown as SandboxPlan;

/** The repositories found in `proj` (sorted), with the counts of directories read and reused. */
function search(proj: string, now = Date.now() + 2 * SETTLE_MS): { repos: string[]; read: number; reused: number } {
  const f = gatherFacts(planFor(proj), undefined, new Map(), undefined, new Listings(now));
  return { repos: f.repos.map((r) => r.dir).sort(), ...lastSearch };
}

function tree(name: string): string {
  const proj = join(root, name);
  for (const d of ['a/b/c', 'a/d', 'e', 'node_modules/x/y/z/w']) mkdirSync(join(proj, d), { recursive: true });
  return proj;
}

describe('the listings the repository search keeps', () => {
  it('reads an unchanged tree once, then only stats it, finding the same', () => {
    const proj = tree('same');
    const first = search(proj);
    expect(first.read).toBeGreaterThan(5);
    expect(first.repos).toEqual([]);
    expect(search(proj)).toEqual({ repos: [], read: 0, reused: first.read });
  });

  it('sees a repository made deep down, a bare one, one moved in, and reads only the directories that changed', () => {
    const proj = tree('changes');
    const all = search(proj).read;
    mkdirSync(join(proj, 'a', 'b', 'c', '.git'));
    let s = search(proj);
    expect(s.repos).toEqual([join(proj, 'a', 'b', 'c', '.git')]);
    expect(s.read).toBe(1);
    // A bare repository: HEAD, objects/ and refs/ appearing in a directory that was there.
    writeFileSync(join(proj, 'e', 'HEAD'), 'ref: refs/heads/main\n');
    mkdirSync(join(proj, 'e', 'objects'));
    mkdirSync(join(proj, 'e', 'refs'));
    s = search(proj);
    expect(s.repos).toContain(join(proj, 'e'));
    // A tree with a repository in it, renamed into the searched one from outside.
    const outside = join(root, 'outside');
    mkdirSync(join(outside, 'r', '.git'), { recursive: true });
    renameSync(join(outside, 'r'), join(proj, 'a', 'd', 'r'));
    s = search(proj);
    expect(s.repos).toContain(join(proj, 'a', 'd', 'r', '.git'));
    expect(s.read + s.reused).toBeGreaterThanOrEqual(all);
  });

  it('reads what a .git file says at every decision, and follows no symlink a directory became', () => {
    const proj = tree('links');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(join(elsewhere, 'one', '.git'), { recursive: true });
    mkdirSync(join(elsewhere, 'two', '.git'), { recursive: true });
    const store = join(proj, 'a', 'b', 'store');
    mkdirSync(store);
    writeFileSync(join(proj, 'a', '.git'), `gitdir: ${join(elsewhere, 'one', '.git')}\n`);
    // Its target is outside the writable tree: a link (the policy locks it), no repository of this tree.
    let s = search(proj);
    expect(s.repos).toEqual([]);
    // Rewritten in place (no directory changes): the next decision reads where it points now.
    writeFileSync(join(proj, 'a', '.git'), `gitdir: ${store}\n`);
    s = search(proj);
    expect(s.read).toBe(0);
    expect(s.repos).toEqual([store]);
    // A directory swapped for a symlink to a tree with a repository: the search does not follow it.
    rmSync(join(proj, 'e'), { recursive: true });
    symlinkSync(join(elsewhere, 'two'), join(proj, 'e'));
    expect(search(proj).repos).toEqual([store]);
  });

  it('keeps nothing changed within SETTLE_MS of the search: a tree just made is read again', () => {
    const proj = tree('fresh');
    const first = search(proj, Date.now());
    expect(search(proj, Date.now())).toEqual({ repos: [], read: first.read, reused: 0 });
  });
});
