// What an invalid_arguments message tells the caller: which argument, and what it must be (the
// allowed values of an enum or a constant), never the value that arrived (it may be a script).
import { describe, expect, it } from 'vitest';
import { validateOutputInput, validateRunInput, validateStartInput } from '../../src/broker/contract.js';

const target = { kind: 'pane', id: '%3', generation: 'g' };
const message = (v: { ok: boolean; message?: string }): string => {
  expect(v.ok).toBe(false);
  return v.message ?? '';
};

describe('invalid_arguments messages', () => {
  it('name the allowed values of an enum, not the value given', () => {
    const m = message(validateOutputInput({ target, run_id: 'a'.repeat(32), stream: 'SECRET-both' }));
    expect(m).toBe('argument stream must be one of "stdout", "stderr"');
    const o = message(validateStartInput({ target, script: 'true', overflow: 'SECRET-middle' }));
    expect(o).toBe('argument overflow must be one of "stop", "tail"');
  });

  it("name the constant a target's kind must be", () => {
    const m = message(validateRunInput({ target: { ...target, kind: 'SECRET-window' }, script: 'true' }));
    expect(m).toBe('argument target.kind must be "pane"');
  });
});
