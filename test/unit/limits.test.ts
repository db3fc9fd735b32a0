// The limits have one home (src/core/protocol/limits.ts); the JSON Schemas repeat them as literals,
// and this proves every copy agrees, and that the frame limits fit the largest messages.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_FRAME,
  DEFAULT_OUTPUT_LIMIT,
  MAX_OUTPUT_LIMIT,
  MAX_REQUEST_FRAME,
  MAX_SCRIPT_BYTES,
} from '../../src/core/protocol/limits.js';
import { encodeFrame } from '../../src/core/protocol/framing.js';

const schema = (rel: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../schemas/${rel}`, import.meta.url), 'utf8')) as unknown;

/** Every value found under a property named `key`, anywhere in the schema. */
function under(node: unknown, key: string, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (Array.isArray(node)) for (const n of node) under(n, key, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && v !== null && typeof v === 'object' && key in v)
        out.push((v as Record<string, Record<string, unknown>>)[key]!);
      under(v, key, out);
    }
  }
  return out;
}

describe('limits', () => {
  it('the schemas bound scripts and output limits with the same numbers', () => {
    const input = schema('tmux_run.input.schema.json');
    const start = schema('tmux_run_start.input.schema.json');
    const request = schema('wire/request.schema.json');
    const output = schema('tmux_run.output.schema.json');
    // tmux_run's and tmux_run_start's inputs, the wire's run and start requests.
    const scripts = [...under(input, 'script'), ...under(start, 'script'), ...under(request, 'script')];
    expect(scripts).toHaveLength(4);
    for (const s of scripts) expect(s.maxLength).toBe(MAX_SCRIPT_BYTES);
    const limits = [input, start, request].flatMap((s) => [...under(s, 'stdout_limit'), ...under(s, 'stderr_limit')]);
    expect(limits).toHaveLength(6);
    for (const l of limits) expect(l.maximum).toBe(MAX_OUTPUT_LIMIT);
    const bytes = under(output, 'bytes');
    expect(bytes.length).toBeGreaterThanOrEqual(2);
    for (const b of bytes) expect(b.maximum).toBe(MAX_OUTPUT_LIMIT);
    // base64 of a full stream is the longest `data` can be.
    const data = under(output, 'data').filter((d) => d.type === 'string');
    expect(data.length).toBeGreaterThanOrEqual(2);
    for (const d of data) expect(d.maxLength).toBe(Math.ceil(MAX_OUTPUT_LIMIT / 3) * 4);
    expect(DEFAULT_OUTPUT_LIMIT).toBeLessThanOrEqual(MAX_OUTPUT_LIMIT);
  });

  it('the largest request fits a request frame, the largest reply the default frame', () => {
    const binding = {
      run_id: 'a'.repeat(32),
      script_digest: 'b'.repeat(64),
      server_generation: 's'.repeat(128),
      pane_id: `%${'9'.repeat(30)}`,
      enrollment_generation: 'c'.repeat(32),
      process_generation: 'd'.repeat(32),
      stdout_limit: MAX_OUTPUT_LIMIT,
      stderr_limit: MAX_OUTPUT_LIMIT,
      issued_at: Date.now(),
    };
    const run = { type: 'run', binding, token: 'e'.repeat(64), script: 'x'.repeat(MAX_SCRIPT_BYTES), progress: true };
    expect(encodeFrame(run).length).toBeLessThanOrEqual(MAX_REQUEST_FRAME);
    const full = Buffer.alloc(MAX_OUTPUT_LIMIT, 0x78);
    const done = {
      type: 'done',
      run_id: 'a'.repeat(32),
      completion: { state: 'exited', exit_status: 0, signal: null },
      stdout: full,
      stderr: full,
      duration_ms: 1,
    };
    expect(encodeFrame(done).length).toBeLessThanOrEqual(DEFAULT_MAX_FRAME);
  });
});
