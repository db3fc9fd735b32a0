// src/core/os/screen-read.ts's environment for the screen check's tmux client: only the locale
// and TERM go (tmux's client sends the server every variable it has, one message each).
import { describe, expect, it } from 'vitest';
import { screenEnv, SCREEN_ENV_NAMES } from '../../src/core/os/screen-read.js';

describe('screenEnv', () => {
  it('keeps the locale and TERM and nothing else', () => {
    const env = {
      LANG: 'C.UTF-8',
      LC_ALL: 'en_US.UTF-8',
      TERM: 'tmux-256color',
      HOME: '/h',
      PATH: '/bin',
      SECRET: 'x',
    };
    expect(screenEnv(env)).toEqual({ LANG: 'C.UTF-8', LC_ALL: 'en_US.UTF-8', TERM: 'tmux-256color' });
    expect([...SCREEN_ENV_NAMES].sort()).toEqual(['LANG', 'LC_ALL', 'LC_CTYPE', 'TERM']);
  });

  it('leaves out what is not set', () => {
    expect(screenEnv({ PATH: '/bin', LC_CTYPE: undefined })).toEqual({});
  });
});
