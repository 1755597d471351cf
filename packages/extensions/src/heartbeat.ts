// The heartbeat of one live server: a ping after intervalMs of idle time (no call in
// flight), or at once after a call timed out, each with its own deadline (timeoutMs), never
// sharing a request with the agent's calls. A ping that gets no answer (timeout, exit,
// protocol fault) hands the client to `failed`, which takes the server out; an error answer
// is an answer. One ping at a time; the timer never keeps the
// agent's process alive.

import type { ManagedClient } from "./server-manager-options.ts";

export class Heartbeat {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private beating: ManagedClient | undefined;
  /** Pings that failed. */
  failures = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    /** Whether `client` is still the server's live, ready client with no call in flight. */
    private readonly idle: (client: ManagedClient) => boolean,
    /** Whether `client` is still the server's live client (calls may be in flight). */
    private readonly live: (client: ManagedClient) => boolean,
    private readonly failed: (client: ManagedClient, error: unknown) => void,
  ) {}

  // Schedules the next ping of an idle, ready client (replacing any scheduled one).
  arm(client: ManagedClient | undefined): void {
    this.stop();
    if (this.intervalMs === 0 || !client?.ping || !this.idle(client)) return;
    this.timer = setTimeout(() => void this.beat(client), this.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  // Pings now (after a timed-out call, or when the idle timer fires).
  async beat(client: ManagedClient): Promise<void> {
    if (this.intervalMs === 0 || this.beating === client || !client.ping || !this.live(client)) return;
    this.beating = client;
    try {
      await client.ping({ timeoutMs: this.timeoutMs });
    } catch (error) {
      // A JSON-RPC error answer (a server without ping, say) is still an answer: it is alive.
      const answered = (error as { code?: unknown } | null)?.code === "MCP_ERROR";
      if (!answered && this.live(client)) {
        this.failures += 1;
        this.failed(client, error);
      }
    } finally {
      this.beating = undefined;
    }
    this.arm(client);
  }
}
