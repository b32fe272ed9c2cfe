import { describe, expect, it } from 'vitest';
import { CrashThrottle } from '../../src/render/crash-throttle.ts';

describe('CrashThrottle', () => {
  it('holds a workspace to one render at a time after 3 crashes in a minute, and lets go after the window', () => {
    let now = 0;
    const throttle = new CrashThrottle({ crashes: 3, windowMs: 60_000, delayMs: 5_000, now: () => now });
    expect(throttle.tryStart('ws')).toBe(true);
    expect(throttle.tryStart('ws')).toBe(true); // not throttled: any number at once
    throttle.finish('ws');
    throttle.finish('ws');
    for (let i = 0; i < 3; i++) throttle.recordCrash('ws');
    expect(throttle.isThrottled('ws')).toBe(true);
    expect(throttle.tryStart('ws')).toBe(true);
    expect(throttle.tryStart('ws')).toBe(false); // a second one waits
    expect(throttle.tryStart('other')).toBe(true); // other workspaces are not affected
    throttle.finish('ws');
    expect(throttle.tryStart('ws')).toBe(true);
    throttle.finish('ws');
    now += 60_001;
    expect(throttle.isThrottled('ws')).toBe(false);
    expect(throttle.tryStart('ws')).toBe(true);
    expect(throttle.tryStart('ws')).toBe(true);
  });

  it('two crashes are not enough', () => {
    const throttle = new CrashThrottle();
    throttle.recordCrash('ws');
    throttle.recordCrash('ws');
    expect(throttle.isThrottled('ws')).toBe(false);
  });
});
