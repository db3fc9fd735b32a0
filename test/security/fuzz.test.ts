// Property tests (fast-check) over the pure pieces every byte from outside passes through:
// framing, wire validation, tool input validation, the broker's tmux_run entry point, and the
// HMAC binding. Bounded runs (NUM_RUNS per property) keep the whole file to a few seconds.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import Ajv2020Module from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { FrameDecoder, FrameError, encodeFrame } from '../../src/core/protocol/framing.js';
import { checkReply, checkRequest } from '../../src/core/protocol/messages.js';
import { bindingText, signBinding, signRevoke, type Binding } from '../../src/core/protocol/token.js';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import { validateRunInput } from '../../src/broker/contract.js';
import { runTool } from '../../src/broker/run-tool.js';

const NUM_RUNS = Number(process.env.FUZZ_RUNS) || 500;
const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const ROOT = join(import.meta.dirname, '..', '..');
const schema = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(ROOT, 'schemas', name), 'utf8')) as Record<string, unknown>;

// Reference validators compiled here, straight from the JSON files, with nothing of the product's build.
const ajv = new Ajv2020({ strict: false, allErrors: false });
const refRequest = ajv.compile(schema('wire/request.schema.json'));
const refReply = ajv.compile(schema('wire/reply.schema.json'));
const refRunInput = ajv.compile(schema('tmux_run.input.schema.json'));
const refRunOutput = ajv.compile(schema('tmux_run.output.schema.json'));

/** Cases run by this file, reported at the end. */
let cases = 0;
afterAll(() => {
  console.log(`fuzz: ${cases} generated cases (${NUM_RUNS} per property; FUZZ_RUNS sets it)`);
});

/** Runs a property with the bounded budget and counts its cases. */
async function holds<T>(p: fc.IProperty<T> | fc.IAsyncProperty<T>, runs = NUM_RUNS): Promise<void> {
  const out = await fc.check(p as fc.IRawProperty<T>, { numRuns: runs });
  cases += out.numRuns;
  if (out.failed) throw new Error(fc.defaultReportMessage(out) ?? 'property failed');
}

// ---------------------------------------------------------------- values and bytes

const hex = (n: number): fc.Arbitrary<string> => fc.stringMatching(new RegExp(`^[a-f0-9]{${n}}$`));
/** JSON values without `__proto__` keys (msgpackr renames them); compared through JSON, so -0 and 0 are one. */
const wireValue = fc.jsonValue({ maxDepth: 4 }).filter((v) => !JSON.stringify(v).includes('"__proto__"'));
const normalise = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/** Cuts `bytes` at the given points (taken modulo its length) into consecutive chunks. */
function chop(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

/** Pushes chunks into a decoder; returns the frames, or the error thrown. */
function feed(decoder: FrameDecoder, chunks: Buffer[]): { frames: unknown[]; error?: unknown } {
  const frames: unknown[] = [];
  for (const c of chunks) {
    try {
      frames.push(...decoder.push(c));
    } catch (error) {
      return { frames, error };
    }
  }
  return { frames };
}

describe('fuzz: framing', () => {
  it('valid frames cut into arbitrary chunks come back whole and in order', async () => {
    await holds(
      fc.property(
        fc.array(wireValue, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (values, cuts) => {
          const bytes = Buffer.concat(values.map((v) => encodeFrame(v)));
          const got = feed(new FrameDecoder(), chop(bytes, cuts));
          expect(got.error).toBeUndefined();
          expect(got.frames.map(normalise)).toEqual(values.map(normalise));
        },
      ),
    );
  });

  it('arbitrary bytes only ever raise FrameError', async () => {
    await holds(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.array(fc.nat(), { maxLength: 8 }), (raw, cuts) => {
        const got = feed(new FrameDecoder(4096), chop(Buffer.from(raw), cuts));
        if (got.error !== undefined) expect(got.error).toBeInstanceOf(FrameError);
      }),
    );
  });

  it('arbitrary msgpack bodies in well-formed frames only ever raise FrameError', async () => {
    // Bodies biased towards msgpack's type bytes: containers, strings, ext types, huge lengths.
    const interesting = fc.constantFrom(
      0xc1,
      0xc4,
      0xc5,
      0xc6,
      0xc7,
      0xc8,
      0xc9,
      0xd4,
      0xd5,
      0xd6,
      0xd7,
      0xd8,
      0xd9,
      0xda,
      0xdb,
      0xdc,
      0xdd,
      0xde,
      0xdf,
      0xff,
      0x65,
      0x69,
      0x70,
      0x72,
      0x73,
      0x74,
      0x78,
      0x62,
      0x42,
      0x91,
      0x81,
      0xa1,
      0x00,
    );
    const body = fc
      .array(fc.oneof(fc.integer({ min: 0, max: 255 }), interesting), { maxLength: 200 })
      .map((a) => Buffer.from(a));
    await holds(
      fc.property(body, fc.array(fc.nat(), { maxLength: 4 }), (b, cuts) => {
        const head = Buffer.alloc(4);
        head.writeUInt32BE(b.length, 0);
        const got = feed(new FrameDecoder(4096), chop(Buffer.concat([head, b]), cuts));
        if (got.error !== undefined) expect(got.error).toBeInstanceOf(FrameError);
        // Whatever decoded, validation of it never throws.
        for (const f of got.frames) {
          expect(() => checkRequest(f)).not.toThrow();
          expect(() => checkReply(f)).not.toThrow();
        }
      }),
      NUM_RUNS * 2,
    );
  });
});

// ---------------------------------------------------------------- wire validation

const binding: fc.Arbitrary<Binding> = fc.record({
  run_id: hex(32),
  script_digest: hex(64),
  server_generation: fc.string({ minLength: 1, maxLength: 128 }),
  pane_id: fc.integer({ min: 0, max: 99999 }).map((n) => `%${n}`),
  enrollment_generation: hex(32),
  process_generation: hex(32),
  stdout_limit: fc.integer({ min: 0, max: 262144 }),
  stderr_limit: fc.integer({ min: 0, max: 262144 }),
  issued_at: fc.integer({ min: 0, max: 2 ** 50 }),
});

const request = fc.oneof(
  fc.constant({ type: 'ping' }),
  fc.record({
    type: fc.constant('run'),
    binding,
    token: hex(64),
    script: fc.string({ maxLength: 50 }),
    progress: fc.boolean(),
  }),
  fc.record({ type: fc.constant('cancel'), run_id: hex(32) }),
  fc.record({ type: fc.constant('revoke'), enrollment_generation: hex(32), issued_at: fc.nat(), token: hex(64) }),
);

const completion = fc.oneof(
  fc.record({ state: fc.constant('exited'), exit_status: fc.integer({ min: 0, max: 255 }), signal: fc.constant(null) }),
  fc.record({
    state: fc.constant('signaled'),
    exit_status: fc.constant(null),
    signal: fc.integer({ min: 1, max: 255 }),
  }),
);
const reply = fc.oneof(
  fc.record({
    type: fc.constant('pong'),
    pid: fc.nat(),
    shell_pid: fc.nat(),
    state: fc.constantFrom('idle', 'busy', 'running'),
    cwd: fc.option(fc.string(), { nil: null }),
    queued: fc.nat(),
    generation: hex(32),
  }),
  fc.record({ type: fc.constant('queued'), run_id: hex(32), position: fc.nat() }),
  fc.record({ type: fc.constant('started'), run_id: hex(32), pgid: fc.integer({ min: 2 }) }),
  fc.record({
    type: fc.constant('done'),
    run_id: hex(32),
    completion,
    stdout: fc.oneof(
      fc.uint8Array().map((a) => Buffer.from(a)),
      fc.string(),
    ),
    stderr: fc.uint8Array().map((a) => Buffer.from(a)),
    duration_ms: fc.nat(),
  }),
  fc.record(
    {
      type: fc.constant('error'),
      code: fc.stringMatching(/^[a-z_]{1,64}$/),
      message: fc.string({ maxLength: 100 }),
      ran: fc.boolean(),
    },
    { requiredKeys: ['type', 'code', 'message', 'ran'] },
  ),
  fc.constant({ type: 'revoked' }),
);

/** A value, or a mutation of it: a key dropped, a key added, a value replaced by anything. */
function mutated<T extends object>(base: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc
    .tuple(base, fc.nat(), fc.anything({ maxDepth: 2 }), fc.constantFrom('keep', 'drop', 'add', 'replace', 'nest'))
    .map(([v, i, any, how]) => {
      const o = JSON.parse(JSON.stringify(v, (_k, x: unknown) => (Buffer.isBuffer(x) ? undefined : x))) as Record<
        string,
        unknown
      >;
      for (const k of Object.keys(v))
        if (Buffer.isBuffer((v as Record<string, unknown>)[k])) o[k] = (v as Record<string, unknown>)[k];
      const keys = Object.keys(o);
      const k = keys[i % Math.max(1, keys.length)];
      if (how === 'drop' && k !== undefined) delete o[k];
      if (how === 'add') o[`x${i}`] = any;
      if (how === 'replace' && k !== undefined) o[k] = any;
      if (how === 'nest' && k !== undefined && typeof o[k] === 'object' && o[k] !== null)
        (o[k] as Record<string, unknown>)[`y${i}`] = any;
      return o;
    });
}

/** Odd things msgpack could decode to: anything fast-check makes, with maps, sets, dates, typed arrays, bigints, null prototypes. */
const oddValue = fc.anything({
  maxDepth: 3,
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withNullPrototype: true,
  withBoxedValues: true,
  withSparseArray: true,
});

describe('fuzz: wire validation', () => {
  it('checkRequest never throws and accepts exactly what the request schema accepts', async () => {
    await holds(
      fc.property(fc.oneof(request, mutated(request), oddValue), (v) => {
        let got: ReturnType<typeof checkRequest> | undefined;
        expect(() => (got = checkRequest(v))).not.toThrow();
        expect(got!.ok).toBe(refRequest(v));
        if (
          !got!.ok &&
          typeof (v as { script?: unknown })?.script === 'string' &&
          (v as { script: string }).script.length > 8
        ) {
          expect(got!.error).not.toContain((v as { script: string }).script);
        }
      }),
    );
  });

  it('checkReply never throws and accepts what the reply schema accepts, done only with bytes', async () => {
    await holds(
      fc.property(fc.oneof(reply, mutated(reply), oddValue), (v) => {
        let got: ReturnType<typeof checkReply> | undefined;
        expect(() => (got = checkReply(v))).not.toThrow();
        const r = v as { type?: unknown; stdout?: unknown; stderr?: unknown };
        const bytes = r?.type !== 'done' || (Buffer.isBuffer(r.stdout) && Buffer.isBuffer(r.stderr));
        expect(got!.ok).toBe(refReply(v) && bytes);
      }),
    );
  });
});

// ---------------------------------------------------------------- tool input and runTool

const SCRIPT_TAG = 'SCRIPT-TEXT-';
const script = fc.string({ minLength: 4, maxLength: 40, unit: 'binary' }).map((s) => `${SCRIPT_TAG}${s}`);
const target = fc.oneof(
  fc.record({
    kind: fc.constant('pane'),
    id: fc.integer({ min: 0, max: 999 }).map((n) => `%${n}`),
    generation: fc.string({ minLength: 1, maxLength: 40 }),
  }),
  fc.record(
    {
      kind: fc.constantFrom('pane', 'window', ''),
      id: fc.string({ maxLength: 40 }),
      generation: fc.string({ maxLength: 200 }),
    },
    { requiredKeys: [] },
  ),
  fc.anything({ maxDepth: 1 }),
);
const limit = fc.oneof(
  fc.integer({ min: 0, max: 262144 }),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 5 }),
  fc.constant(null),
);
const runInput = fc.oneof(
  fc.record({ target, script, stdout_limit: limit, stderr_limit: limit }, { requiredKeys: ['target', 'script'] }),
  fc.record(
    {
      target,
      script: fc.oneof(
        script,
        script.map((s) => `${s}\u0000`),
        fc.anything({ maxDepth: 1 }),
      ),
      stdout_limit: limit,
      extra: fc.anything({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
/** A script long enough that finding it in a message means it was quoted. */
const quotable = (s: unknown): s is string => typeof s === 'string' && s.length >= 12;
const hasLoneSurrogate = (s: unknown): boolean =>
  typeof s === 'string' && /\p{Surrogate}/u.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));

describe('fuzz: tmux_run input', () => {
  it('validateRunInput agrees with the input schema and never quotes the script', async () => {
    await holds(
      fc.property(fc.oneof(runInput, mutated(fc.record({ target, script }))), (v) => {
        const got = validateRunInput(v);
        expect(got.ok).toBe(refRunInput(v));
        const s = (v as { script?: unknown } | null)?.script;
        if (!got.ok && quotable(s)) expect(got.message).not.toContain(s);
      }),
    );
  });

  const dir = mkdtempSync(join(tmpdir(), 'tmux-run-fuzz-'));
  const audit = new AuditLog(join(dir, 'state', 'audit.jsonl'));
  const registry = join(dir, 'run');
  mkdirSync(registry, { mode: 0o700 });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runTool on anything, with an empty registry, returns a result valid against the output schema, nothing sent', async () => {
    await holds(
      fc.asyncProperty(fc.oneof(runInput, mutated(fc.record({ target, script }))), async (v) => {
        const logged: string[] = [];
        const r = await runTool(v, { dir: registry, audit, log: (m) => logged.push(m) });
        expect(refRunOutput(r), JSON.stringify(refRunOutput.errors)).toBe(true);
        expect(r.ok).toBe(false);
        if (r.ok) return;
        expect(r.error.delivery).toBe('not_sent');
        expect(r.error.effects?.state).toBe('none');
        expect(['invalid_arguments', 'not_enrolled']).toContain(r.error.code);
        if (r.error.code === 'not_enrolled')
          expect(refRunInput(v) && !hasLoneSurrogate((v as { script: string }).script)).toBe(true);
        const s = (v as { script?: unknown } | null)?.script;
        if (quotable(s)) {
          expect(r.error.message).not.toContain(s);
          for (const line of logged) expect(line).not.toContain(s);
        }
      }),
      NUM_RUNS / 2,
    );
    // The audit trail recorded digests of refused scripts, never their text.
    let trail = '';
    try {
      trail = readFileSync(audit.path, 'utf8');
    } catch {
      /* nothing reached the registry */
    }
    expect(trail).not.toContain(SCRIPT_TAG);
  });
});

// ---------------------------------------------------------------- HMAC binding

describe('fuzz: the authorization binding', () => {
  const fields = Object.keys({
    run_id: 0,
    script_digest: 0,
    server_generation: 0,
    pane_id: 0,
    enrollment_generation: 0,
    process_generation: 0,
    stdout_limit: 0,
    stderr_limit: 0,
    issued_at: 0,
  } satisfies Record<keyof Binding, 0>) as Array<keyof Binding>;

  it('changing any single field of a binding changes its token; every field is signed', async () => {
    await holds(
      fc.property(
        binding,
        binding,
        fc.constantFrom(...fields),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (a, b, field, key) => {
          fc.pre(a[field] !== b[field]);
          const secret = Buffer.from(key);
          const changed = { ...a, [field]: b[field] };
          expect(bindingText(changed)).not.toBe(bindingText(a));
          expect(signBinding(secret, changed)).not.toBe(signBinding(secret, a));
        },
      ),
    );
  });

  it('a token depends on the secret, and a revocation token is never a run token', async () => {
    await holds(
      fc.property(
        binding,
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (b, k1, k2) => {
          fc.pre(Buffer.compare(Buffer.from(k1), Buffer.from(k2)) !== 0);
          expect(signBinding(Buffer.from(k1), b)).not.toBe(signBinding(Buffer.from(k2), b));
          expect(signRevoke(Buffer.from(k1), b.enrollment_generation, b.issued_at)).not.toBe(
            signBinding(Buffer.from(k1), b),
          );
        },
      ),
    );
  });

  it('two different schema-valid bindings never share their signed text', async () => {
    await holds(
      fc.property(binding, binding, (a, b) => {
        fc.pre(fields.some((f) => a[f] !== b[f]));
        expect(bindingText(a)).not.toBe(bindingText(b));
      }),
    );
  });
});
