// Merging the entry into JSON settings: the rest of the file kept as written, parsed with the
// client's own rules, refused when it does not parse.
import { describe, expect, it } from 'vitest';
import { formattingOf, mergeJson, parseJson, type JsonTarget } from '../../src/cli/setup/json-config.js';
import { ConfigError } from '../../src/cli/setup/merge.js';

const entry = { command: '/n', args: ['/b', '--enable-tool', 'tmux_run'] };
const target = (over: Partial<JsonTarget> = {}): JsonTarget => ({
  dialect: 'json',
  container: 'mcpServers',
  name: 'tmux-run',
  entry,
  ...over,
});

describe('mergeJson', () => {
  it('adds the entry beside the other servers and keys, and a second merge changes nothing', () => {
    const original =
      JSON.stringify({ theme: 'dark', mcpServers: { other: { command: 'x', args: [] } } }, null, 2) + '\n';
    const r = mergeJson(original, target());
    expect(r.status).toBe('added');
    expect(JSON.parse(r.text)).toEqual({
      theme: 'dark',
      mcpServers: { other: { command: 'x', args: [] }, 'tmux-run': entry },
    });
    // Only an insertion: everything that was there is still there, byte for byte.
    expect(r.text.startsWith(original.slice(0, original.indexOf('}') + 1))).toBe(true);
    expect(r.text.endsWith('\n')).toBe(true);
    const again = mergeJson(r.text, target());
    expect(again).toMatchObject({ status: 'unchanged', text: r.text });
  });

  it('creates the container, and starts from an empty or missing file', () => {
    expect(JSON.parse(mergeJson('{"a": 1}', target()).text)).toEqual({ a: 1, mcpServers: { 'tmux-run': entry } });
    expect(JSON.parse(mergeJson('', target()).text)).toEqual({ mcpServers: { 'tmux-run': entry } });
  });

  it("updates only this entry's keys of an older entry, keeping the person's extra keys and env", () => {
    const old = { mcpServers: { 'tmux-run': { command: '/old', args: ['/old/b'], env: { A: '1' }, timeout: 5 } } };
    const r = mergeJson(JSON.stringify(old), target({ entry: { ...entry, env: { TMUX_RUN_DIR: '/r' } } }));
    expect(r.status).toBe('updated');
    expect(r.previous).toEqual(old.mcpServers['tmux-run']);
    expect(JSON.parse(r.text)).toEqual({
      mcpServers: { 'tmux-run': { ...entry, env: { A: '1', TMUX_RUN_DIR: '/r' }, timeout: 5 } },
    });
  });

  it('keeps comments and trailing commas where the client allows them (VS Code)', () => {
    const original = '{\n  // my servers\n  "servers": {\n    "a": { "command": "x", }, /* keep */\n  },\n}\n';
    const r = mergeJson(original, target({ dialect: 'jsonc', container: 'servers' }));
    expect(r.text).toContain('// my servers');
    expect(r.text).toContain('/* keep */');
    expect(parseJson(r.text, 'jsonc')).toEqual({ servers: { a: { command: 'x' }, 'tmux-run': entry } });
  });

  it('refuses, with where and why, a file its client would not read', () => {
    expect(() => mergeJson('{"mcpServers": {', target())).toThrow(ConfigError);
    expect(() => mergeJson('{"a": 1} // note', target())).toThrow(/not valid JSON/);
    expect(() => mergeJson('{\n "a": 1,\n}', target({ dialect: 'json-comments' }))).toThrow(/line 3, column 1/);
    expect(() => mergeJson('[]', target())).toThrow(/top level is not a JSON object/);
    expect(() => mergeJson('{"mcpServers": []}', target())).toThrow(/"mcpServers" is not an object/);
    // Gemini CLI strips comments: they are fine there.
    expect(mergeJson('{ /* c */ "a": 1 }', target({ dialect: 'json-comments' })).status).toBe('added');
  });

  it("writes new keys with the file's own indentation and line ends", () => {
    expect(formattingOf('{\n    "a": 1\n}')).toMatchObject({ insertSpaces: true, tabSize: 4, eol: '\n' });
    expect(formattingOf('{\r\n\t"a": 1\r\n}')).toMatchObject({ insertSpaces: false, eol: '\r\n' });
    const r = mergeJson('{\n    "a": 1\n}\n', target());
    expect(r.text).toContain('\n    "mcpServers": {\n        "tmux-run": {');
  });
});
