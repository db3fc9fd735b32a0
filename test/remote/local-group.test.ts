// A process group number a far helper reports names a process of the far host: the broker never
// signals it here (src/core/enrollment/remote-listing.ts localGroup), while a local helper's is
// its to stop.
import { describe, expect, it } from 'vitest';
import { localGroup } from '../../src/core/enrollment/remote-listing.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';

describe('the process group a broker may stop here', () => {
  it("is a local helper's, never a number the far end gave", () => {
    const remote = {
      destination: 'd',
      hostname: 'h',
      relay_pid: 10,
      relay_start: '1',
      ssh_pid: 11,
      ssh_start: '2',
      remote_boot: 'b',
    } satisfies NonNullable<EnrollmentRecord['remote']>;
    expect(localGroup({ remote }, process.pid)).toBeUndefined();
    expect(localGroup({}, 4242)).toBe(4242);
  });
});
