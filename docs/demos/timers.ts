// Counts the timers created through the global setTimeout/setInterval that are still
// armed (neither fired nor cleared). Installed only while a demo measures a client, so
// a leak shows up as a number, whether or not the leaked timer is unref'd.

export interface TimerCounter {
  /** Timers armed right now that were created since install(). */
  live(): number;
  /** Puts the original timer functions back. */
  uninstall(): void;
}

export function installTimerCounter(): TimerCounter {
  const g = globalThis as any;
  const original = {
    setTimeout: g.setTimeout,
    clearTimeout: g.clearTimeout,
    setInterval: g.setInterval,
    clearInterval: g.clearInterval,
  };
  const armed = new Set<unknown>();
  g.setTimeout = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = original.setTimeout((...inner: unknown[]) => {
      armed.delete(handle);
      callback(...inner);
    }, ms, ...args);
    armed.add(handle);
    return handle;
  };
  g.setInterval = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = original.setInterval(callback, ms, ...args);
    armed.add(handle);
    return handle;
  };
  const clear = (orig: (handle: unknown) => void) => (handle: unknown) => {
    // clearTimeout accepts the Timeout object or its numeric id.
    for (const h of armed) if (h === handle || Number(h) === Number(handle)) armed.delete(h);
    orig(handle);
  };
  g.clearTimeout = clear(original.clearTimeout);
  g.clearInterval = clear(original.clearInterval);
  return {
    live: () => armed.size,
    uninstall() {
      Object.assign(g, original);
    },
  };
}
