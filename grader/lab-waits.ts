// What the labs' tests build on their own hang detector (each lab's tests/support.ts has a
// settleWithin that never hangs): "resolves with the value or throws" and "resolves with
// the rejection reason", the one place both labs take them from.

export type Settled<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: any };

export type SettleWithin = <T>(promise: Promise<T>, label: string, ms?: number) => Promise<Settled<T>>;

export interface Waits {
  /** Resolves with the value, or throws the rejection (or the detector's "hung: …"). */
  within<T>(promise: Promise<T>, label: string, ms?: number): Promise<T>;
  /** Resolves with the rejection reason; throws `shouldReject(label, value)` when it resolves. */
  rejection(promise: Promise<unknown>, label: string, ms?: number): Promise<any>;
}

// The test line that waited, not this file, is where a failure points (vitest's code frame
// shows the first frame outside node_modules).
function atCaller(error: Error): Error {
  if (error.stack) error.stack = error.stack.split("\n").filter((line) => !line.includes("lab-waits.ts")).join("\n");
  return error;
}

export function waitsOn(settleWithin: SettleWithin, shouldReject: (label: string, value: unknown) => string): Waits {
  return {
    async within<T>(promise: Promise<T>, label: string, ms?: number): Promise<T> {
      const outcome = await settleWithin(promise, label, ms);
      if (outcome.status === "rejected") throw outcome.reason;
      return outcome.value;
    },
    async rejection(promise: Promise<unknown>, label: string, ms?: number): Promise<any> {
      const outcome = await settleWithin(promise, label, ms);
      if (outcome.status === "fulfilled") throw atCaller(new Error(shouldReject(label, outcome.value)));
      return outcome.reason;
    },
  };
}
