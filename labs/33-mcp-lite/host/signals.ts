// The ids the proxy gives the callers' AbortSignals when it hands them to the host (their
// mirrors there are keyed by these). Its own module, so that the observers can ask for a
// signal's id without loading the proxy (which starts a host).

const signalIds = new WeakMap<AbortSignal, number>();
let nextSignal = 0;

/** The host's id of a signal handed to the client (undefined when never handed over). */
export function signalId(signal: AbortSignal): number | undefined {
  return signalIds.get(signal);
}

/** The signal's id, given one now if it has none; `isNew` says which. */
export function idFor(signal: AbortSignal): { id: number; isNew: boolean } {
  const known = signalIds.get(signal);
  if (known !== undefined) return { id: known, isNew: false };
  const id = ++nextSignal;
  signalIds.set(signal, id);
  return { id, isNew: true };
}
