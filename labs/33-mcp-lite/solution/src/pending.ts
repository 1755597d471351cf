// The request table: one record per in-flight request, owning that request's timer and
// abort listener. Every way a request can end goes through `settle`, and deleting the
// map entry is the commit point: whoever deletes it first decides the outcome, every
// later path finds nothing and does nothing.

export type Outcome = { ok: true; value: unknown } | { ok: false; error: Error };

/** Why a request ended without an answer from the server, reported to `onExpire`. */
export type ExpireReason = "timeout" | "abort";

// #region lesson:pending-record
export interface PendingRecord {
  readonly id: number;
  readonly method: string;
  readonly startedAt: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  timer?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  /** Set once the request line was handed to the pipe (not merely queued). */
  written?: boolean;
  onAbort?: () => void;
}
// #endregion lesson:pending-record

export interface OpenOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Builds the rejection for a request that ran out of time or was aborted. */
  expireError: (record: PendingRecord, reason: ExpireReason, abortReason?: unknown) => Error;
  /** Called after a timeout or abort settled the request (e.g. to tell the server). */
  onExpire?: (record: PendingRecord, reason: ExpireReason) => void;
}

// The requests that share one AbortSignal, and the single listener they share.
interface SignalWatch {
  readonly ids: Set<number>;
  readonly listener: () => void;
}

export class PendingTable {
  private readonly records = new Map<number, PendingRecord>();
  // One abort listener per signal, however many requests share it: an agent passes one
  // long-lived signal to hundreds of concurrent calls, and a listener per call would trip
  // Node's MaxListenersExceededWarning. Removed when the signal's last request settles.
  private readonly watches = new Map<AbortSignal, SignalWatch>();

  get size(): number {
    return this.records.size;
  }

  has(id: number): boolean {
    return this.records.has(id);
  }

  get(id: number): PendingRecord | undefined {
    return this.records.get(id);
  }

  // #region lesson:pending-open
  // Registers a request and returns its promise. The record, its timer and its abort
  // listener exist before the caller writes anything, so an answer that arrives
  // "too fast" always finds its entry.
  open(id: number, method: string, options: OpenOptions): Promise<unknown> {
    if (this.records.has(id)) throw new Error(`request id ${id} is already pending`);
    return new Promise<unknown>((resolve, reject) => {
      const record: PendingRecord = { id, method, startedAt: Date.now(), resolve, reject };
      const expire = (reason: ExpireReason, abortReason?: unknown) => {
        const settled = this.settle(id, { ok: false, error: options.expireError(record, reason, abortReason) });
        if (settled) options.onExpire?.(record, reason);
      };
      record.timer = setTimeout(() => expire("timeout"), options.timeoutMs);
      this.records.set(id, record);
      if (options.signal) {
        const signal = options.signal;
        record.signal = signal;
        record.onAbort = () => expire("abort", signal.reason);
        if (signal.aborted) record.onAbort();
        else this.watch(signal, id);
      }
    });
  }
  // #endregion lesson:pending-open

  // #region lesson:pending-settle
  // The single exit of every request: delete, clear the timer, remove the listener,
  // then resolve or reject. Returns false when the request had already ended.
  settle(id: number, outcome: Outcome): boolean {
    const record = this.records.get(id);
    if (!record) return false;
    this.records.delete(id);
    clearTimeout(record.timer);
    this.unwatch(record.signal, id);
    record.timer = undefined;
    record.onAbort = undefined;
    record.signal = undefined;
    if (outcome.ok) record.resolve(outcome.value);
    else record.reject(outcome.error);
    return true;
  }
  // #endregion lesson:pending-settle

  // #region lesson:pending-reject-all
  // Rejects every request still pending, each with its own error. A snapshot of the ids
  // is taken first so a rejection handler that opens a new request cannot extend the loop.
  rejectAll(makeError: (record: PendingRecord) => Error): number {
    const ids = [...this.records.keys()];
    let count = 0;
    for (const id of ids) {
      const record = this.records.get(id);
      if (record && this.settle(id, { ok: false, error: makeError(record) })) count += 1;
    }
    return count;
  }
  // #endregion lesson:pending-reject-all

  private watch(signal: AbortSignal, id: number): void {
    let watch = this.watches.get(signal);
    if (!watch) {
      const ids = new Set<number>();
      // A copy of the ids: each abort settles its request, which unwatches it.
      // Stryker disable next-line OptionalChaining: a record in the table always has its onAbort while its signal is watched
      const listener = () => [...ids].forEach((pendingId) => this.records.get(pendingId)?.onAbort?.());
      watch = { ids, listener };
      this.watches.set(signal, watch);
      // A signal aborts once; the listener goes when the signal's last request settles.
      signal.addEventListener("abort", listener);
    }
    watch.ids.add(id);
  }

  // A request without a signal has no watch: nothing to do.
  private unwatch(signal: AbortSignal | undefined, id: number): void {
    // Stryker disable next-line LogicalOperator: with `||`, an absent signal looks up undefined, which is never a key
    const watch = signal && this.watches.get(signal);
    if (!watch) return;
    watch.ids.delete(id);
    if (watch.ids.size > 0) return;
    signal.removeEventListener("abort", watch.listener);
    this.watches.delete(signal);
  }
}
