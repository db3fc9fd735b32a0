// Who asked: the MCP client's clientInfo as one bounded label (src/core/protocol/client.ts), the same
// bound as the wire schema's, and how the ask question and the notices carry it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clientLabel, MAX_CLIENT_LABEL, MAX_CLIENT_NAME, shownClient } from '../../src/core/protocol/client.js';
import { CLIENT_SEPARATOR, PREVIEW_SEPARATOR, previewFields } from '../../helper/shell/approval.js';
import { byClient } from '../../helper/queue/job.js';

const schema = (rel: string): any => JSON.parse(readFileSync(new URL(`../../schemas/${rel}`, import.meta.url), 'utf8'));

describe('who asked', () => {
  it('is the name and version the client gave, trimmed and cut to their bounds', () => {
    expect(clientLabel({ name: 'claude-code', version: '2.0.1' })).toBe('claude-code 2.0.1');
    expect(clientLabel({ name: ' codex ', version: '' })).toBe('codex');
    expect(clientLabel({ name: 'x'.repeat(500), version: 'v'.repeat(500) })).toHaveLength(MAX_CLIENT_LABEL);
    expect(clientLabel({ name: '😀'.repeat(100) })).toBe('😀'.repeat(MAX_CLIENT_NAME));
  });

  it('is nothing when the client named nothing, never a failure', () => {
    expect(clientLabel(undefined)).toBeUndefined();
    expect(clientLabel({ name: '' })).toBeUndefined();
    expect(clientLabel({ name: '   ', version: '1' })).toBeUndefined();
    expect(clientLabel({ name: 42 })).toBeUndefined();
  });

  it('has the same bound in the wire schemas and in tmux_runs', () => {
    const req = schema('wire/request.schema.json');
    expect(req.$defs.client.maxLength).toBe(MAX_CLIENT_LABEL);
    const reply = JSON.stringify(schema('wire/reply.schema.json'));
    expect(reply).toContain(`"client":{"type":"string","minLength":1,"maxLength":${MAX_CLIENT_LABEL}}`);
    expect(schema('tmux_runs.output.schema.json').properties.runs.items.properties.client.maxLength).toBe(
      MAX_CLIENT_LABEL,
    );
  });

  it('is shown escaped: in notices and after the ask question preview', () => {
    expect(shownClient('a\x1b]0;title\x07b')).toBe('a\\x1b]0;title\\x07b');
    expect(byClient({ client: 'bad\u202ename 1' })).toBe(' by bad\\u{202e}name 1');
    expect(byClient({})).toBe('');
    const p = previewFields({
      runId: 'r'.repeat(32),
      digest: 'd'.repeat(64),
      script: 'echo a\necho b\n',
      client: 'x\ny 1',
    });
    expect(p).toBe(
      `${'r'.repeat(32)} ${'d'.repeat(64)} 14 2 echo a${PREVIEW_SEPARATOR}echo b${CLIENT_SEPARATOR}x\\x0ay 1`,
    );
    expect(previewFields({ runId: 'r', digest: 'd', script: 'true' })).toBe('r d 4 1 true');
  });
});
