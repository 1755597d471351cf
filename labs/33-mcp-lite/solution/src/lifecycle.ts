// The client's lifecycle as a small state machine, read and written only here:
//
//   idle ──toStarting──▶ starting ──toReady──▶ ready
//    ▲                      │                    │
//    └────────toIdle────────┴────────────────────┘   (the server died, broke protocol,
//                                                      or the handshake failed)
//   any ──toClosing──▶ closing ──toClosed──▶ closed    (close(); nothing leaves these)

export type ClientState = "idle" | "starting" | "ready" | "closing" | "closed";

export class Lifecycle {
  private current: ClientState = "idle";

  get state(): ClientState {
    return this.current;
  }

  /** A handshake succeeded and no server failure or close happened since. */
  isReady(): boolean {
    return this.current === "ready";
  }

  /** A handshake is in progress. */
  isStarting(): boolean {
    return this.current === "starting";
  }

  /** close() was called: the client refuses every new call, for good. */
  isShuttingDown(): boolean {
    return this.current === "closing" || this.current === "closed";
  }

  // A handshake begins (from idle; a closing client never starts a server).
  toStarting(): void {
    if (!this.isShuttingDown()) this.current = "starting";
  }

  // The handshake finished: initialize answered and notifications/initialized went out.
  toReady(): void {
    if (this.current === "starting") this.current = "ready";
  }

  // Back to idle after a failure; a client that is shutting down stays where it is.
  toIdle(): void {
    if (this.current === "starting" || this.current === "ready") this.current = "idle";
  }

  // close() began: from any state.
  toClosing(): void {
    if (this.current !== "closed") this.current = "closing";
  }

  // close() finished: the server is gone.
  toClosed(): void {
    this.current = "closed";
  }
}
