// Error codes are data: one list, the wire schema's enum, and the tools' reference's table
// (docs/tools.md, "Error codes") all agree, and a
// refusal says "nothing was run" exactly once, added by the code, not typed by hand.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isErrorCode } from '../../src/core/protocol/errors.js';
import { failure } from '../../src/broker/result.js';
import { checkReply } from '../../src/core/protocol/messages.js';
import { checkRegistryDir, RegistryDirError } from '../../src/core/enrollment/layout.js';

const root = new URL('../../', import.meta.url);

/** The codes named in the first column of the "Error codes" table (docs/tools.md). */
function documentedCodes(page: string): string[] {
  const start = page.indexOf('## Error codes');
  expect(start).toBeGreaterThanOrEqual(0);
  const rows = page
    .slice(start)
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  return rows.flatMap((r) => [...(r.split('|')[1] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
}

describe('error codes', () => {
  it('docs/tools.md documents every code, and no other', () => {
    const documented = documentedCodes(readFileSync(new URL('docs/tools.md', root), 'utf8'));
    expect([...documented].sort()).toEqual([...ERROR_CODES].sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  it('the reader of the table finds a missing or an extra code', () => {
    const table = '## Error codes\n| code | x |\n| --- | --- |\n| `a_code`, `b_code` | y |\n| `c_code` | z |\n';
    expect(documentedCodes(table)).toEqual(['a_code', 'b_code', 'c_code']);
  });

  it("the wire schema's error reply takes exactly these codes", () => {
    const schema = JSON.parse(readFileSync(new URL('schemas/wire/reply.schema.json', root), 'utf8')) as {
      oneOf: Array<{ properties: { type?: { const?: string }; code?: { enum?: string[] } } }>;
    };
    const error = schema.oneOf.find((v) => v.properties.type?.const === 'error');
    expect(error?.properties.code?.enum).toEqual([...ERROR_CODES]);
    const reply = { type: 'error', code: 'shell_busy', message: 'm', ran: false };
    expect(checkReply(reply).ok).toBe(true);
    expect(checkReply({ ...reply, code: 'no_such_code' }).ok).toBe(false);
    expect(isErrorCode('shell_busy')).toBe(true);
    expect(isErrorCode('no_such_code')).toBe(false);
  });

  it('failure() says "nothing was run" when the call was not sent, and only then', () => {
    const notSent = failure('not_enrolled', 'pane %3 is not enrolled', 'not_sent');
    expect(!notSent.ok && notSent.error.message).toBe('pane %3 is not enrolled; nothing was run');
    const observed = failure('helper_lost', 'the link broke', 'observed');
    expect(!observed.ok && observed.error.message).toBe('the link broke');
  });

  it('a message naming outside text shows its control characters, newline included, as escapes', () => {
    const r = failure('cwd_unavailable', 'the directory "/tmp/a\nb\x1b]2;x\x07" is gone', 'observed');
    expect(!r.ok && r.error.message).toBe('the directory "/tmp/a\\x0ab\\x1b]2;x\\x07" is gone');
  });

  it('a missing registry directory is told apart from an unsafe one by its reason', () => {
    const missing = (() => {
      try {
        checkRegistryDir('/nonexistent/tmux-run-test-dir');
      } catch (e) {
        return e;
      }
    })();
    expect(missing).toBeInstanceOf(RegistryDirError);
    expect((missing as RegistryDirError).reason).toBe('missing');
    expect((missing as RegistryDirError).code).toBe('unsafe_directory');
    const relative = (() => {
      try {
        checkRegistryDir('relative/dir');
      } catch (e) {
        return e;
      }
    })();
    expect((relative as RegistryDirError).reason).toBe('unsafe');
  });
});
