// The house's sizes: no product file (src/, helper/; shell/ is the snippets', longer by nature)
// over 350 lines, no product function over 60. A function listed in OVER_THE_LIMIT is known and
// left to the branch that owns its file; the list only shrinks. The finder itself is checked on
// small made-up sources.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { longCFunctions, longFiles, longFunctions, longTsFunctions, productFiles } from '../../lab/sizes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FILE_LIMIT = 350;
const FUNCTION_LIMIT = 60;

// Known, as "path name" (none today): an entry is one its file's owner is to split.
const OVER_THE_LIMIT = new Set<string>([]);
const FILES_OVER_THE_LIMIT = new Set<string>([]);

const body = (n: number): string => Array.from({ length: n }, (_, i) => `  x${i}();`).join('\n');

describe('the size finder', () => {
  it('measures every kind of .ts function from its first token to its closing brace', () => {
    const text = [
      '// a comment above is not counted',
      `export function four() {\n${body(2)}\n}`,
      `const arrow = () => {\n${body(3)}\n};`,
      `class C {\n  method() {\n${body(4)}\n  }\n}`,
      `const o = { prop: function () {\n${body(1)}\n} };`,
      `function outer() {\n  run(() => {\n${body(3)}\n  });\n}`,
      'function short() { return 1; }',
    ].join('\n');
    const found = longTsFunctions('a.ts', text, 2).map((f) => `${f.name}@${f.line}:${f.lines}`);
    expect(found).toEqual([
      'four@2:4',
      'arrow@6:5',
      'method@12:6',
      'prop@19:3',
      'outer@22:7',
      'callback in outer@23:5',
    ]);
    expect(longTsFunctions('a.ts', text, 7)).toEqual([]);
  });

  it('measures .c functions from the signature to the closing brace, and skips structs and declarations', () => {
    const text = [
      '#include <x.h>',
      'struct s {\n  int a;\n  int b;\n};',
      'static int declared(void);',
      `static int f(int a, char *b) {\n${body(3)}\n}`,
      `NAPI_MODULE_INIT() {\n${body(1)}\n}`,
      `int main(void) {\n  if (x) {\n${body(2)}\n  }\n}`,
    ].join('\n');
    expect(longCFunctions('a.c', text, 2).map((f) => `${f.name}@${f.line}:${f.lines}`)).toEqual([
      'f@7:5',
      'NAPI_MODULE_INIT@12:3',
      'main@15:6',
    ]);
  });

  it('counts a file with or without its last newline the same', () => {
    const files = new Map([
      ['a.ts', 'x\ny\nz\n'],
      ['b.ts', 'x\ny\nz'],
      ['c.ts', 'x\ny'],
    ]);
    expect(longFiles(files, 2)).toEqual(['a.ts (3 lines)', 'b.ts (3 lines)']);
  });
});

describe('the repository', () => {
  const files = productFiles(ROOT, ['src', 'helper']);
  const known = (entry: string, set: Set<string>): boolean =>
    set.has(entry.replace(/:\d+ (\S+(?: in \S+)?) .*/, ' $1'));

  it(`has no product file over ${FILE_LIMIT} lines`, () => {
    expect(files.size).toBeGreaterThan(100);
    const over = longFiles(files, FILE_LIMIT).filter((e) => !FILES_OVER_THE_LIMIT.has(e.replace(/ \(.*/, '')));
    expect(over).toEqual([]);
  });

  it(`has no product function over ${FUNCTION_LIMIT} lines`, () => {
    const over = longFunctions(files, FUNCTION_LIMIT).filter((e) => !known(e, OVER_THE_LIMIT));
    expect(over).toEqual([]);
  });
});
