// The result check skips walking long output strings only where ajv's verdict cannot change
// (withoutLongData in src/broker/contract.ts): its verdict equals a plain ajv compile of the
// output schema on the same result, at and around the limit, with astral characters too.
import Ajv2020Module from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runOutputSchema, validateRunOutput, withoutLongData } from '../../src/broker/contract.js';
import { encodeStream } from '../../src/broker/result.js';
import { MAX_OUTPUT_LIMIT } from '../../src/core/protocol/limits.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const plain = new Ajv2020({ allErrors: false, strict: false }).compile(runOutputSchema);
const N = 349528; // the schema's maxLength of a stream's data
const hex = (n: number): string => 'a'.repeat(n);

function result(stdout: unknown, stderr: unknown = encodeStream(Buffer.alloc(0))): unknown {
  return {
    ok: true,
    data: {
      target: { kind: 'pane', id: '%1', generation: hex(32) },
      authorization: {
        state: 'authorized',
        run_id: hex(32),
        script_digest: hex(64),
        server_generation: '1.2.x',
        pane_id: '%1',
        enrollment_generation: hex(32),
        process_generation: hex(32),
      },
      completion: { state: 'exited', exit_status: 0, signal: null },
      stdout,
      stderr,
    },
  };
}
const stream = (data: string): object => ({ encoding: 'utf-8', data, bytes: MAX_OUTPUT_LIMIT, truncated: false });
const same = (r: unknown): void => expect(validateRunOutput(r).ok).toBe(plain(r));

describe('output check without walking long strings', () => {
  it('reads the limit from the schema and leaves the result itself untouched', () => {
    const r = result(stream('x'.repeat(1000)));
    const lean = withoutLongData(r) as { data: { stdout: { data: string } } };
    expect(lean.data.stdout.data).toBe('');
    expect((r as { data: { stdout: { data: string } } }).data.stdout.data).toHaveLength(1000);
  });

  it('agrees with ajv at the limit, past it, and with astral characters counted as one', () => {
    const astral = '\u{1F600}';
    for (const data of [
      'a'.repeat(N),
      'a'.repeat(N + 1),
      astral.repeat(N), // 2N units, N code points: valid
      astral.repeat(N) + 'a', // N + 1 code points: invalid
      astral.repeat(N / 2) + 'a'.repeat(N / 2),
    ]) {
      same(result(stream(data)));
      same(result(encodeStream(Buffer.alloc(0)), stream(data)));
    }
    expect(validateRunOutput(result(stream(astral.repeat(N)))).ok).toBe(true);
    expect(validateRunOutput(result(stream('a'.repeat(N + 1)))).ok).toBe(false);
  });

  it('accepts every output of up to 262144 bytes, as UTF-8 text or base64', () => {
    for (const buf of [Buffer.alloc(MAX_OUTPUT_LIMIT, 'a'), Buffer.alloc(MAX_OUTPUT_LIMIT, 0xff)]) {
      const r = result(encodeStream(buf), encodeStream(buf));
      expect(validateRunOutput(r).ok).toBe(true);
      same(r);
    }
  });

  it('agrees with ajv on arbitrary streams and results', () => {
    const data = fc.oneof(fc.string({ unit: 'binary', maxLength: 64 }), fc.constant(undefined), fc.integer());
    const anyStream = fc.oneof(
      data.map((d) => ({ encoding: 'utf-8', data: d, bytes: 1, truncated: false })),
      fc.anything(),
    );
    fc.assert(
      fc.property(anyStream, anyStream, (o, e) => {
        const r = result(o, e);
        expect(validateRunOutput(r).ok).toBe(plain(r));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.anything(), (r) => {
        expect(validateRunOutput(r).ok).toBe(plain(r));
      }),
      { numRuns: 300 },
    );
  });
});
