// One server's failure bookkeeping (server-manager.ts): consecutive failures, when the next
// start is allowed (exponential backoff), quarantine after maxFailures, and the reset after
// sustained health (a server that stayed up healthyAfterMs), never on a start alone.
//
// No timer: a failure records when the next start is allowed, and the next call compares
// that with the clock, so tests drive time with an injected clock.

import type { Config } from "./server-manager-options.ts";
import { ServerUnavailableError } from "./server-unavailable.ts";

type Limits = Pick<Config, "backoffInitialMs" | "backoffFactor" | "backoffMaxMs" | "maxFailures" | "healthyAfterMs" | "now">;

export class FailureRecord {
  /** Consecutive failures, sustained health aside (see `failures`). */
  count = 0;
  /** The last failure's error. */
  last: unknown;
  private nextStartAt = 0;
  private upSince: number | undefined;

  constructor(private readonly limits: Limits) {}

  /** True once the server has been up healthyAfterMs since it last came up. */
  get sustained(): boolean {
    return this.upSince !== undefined && this.limits.now() - this.upSince >= this.limits.healthyAfterMs;
  }

  /** Ms until a start is allowed again; 0 or less means now. */
  get waitMs(): number {
    return this.nextStartAt - this.limits.now();
  }

  // The server came up healthy: the time from which sustained health counts.
  up(): void {
    this.upSince = this.limits.now();
  }

  // The server went down on purpose (stopped, not failed): what it lived so far still
  // resets the count if it was enough, and a later start has to earn it again.
  down(): void {
    if (this.sustained) this.count = 0;
    this.upSince = undefined;
  }

  // Counts one failure and schedules the next start; says whether the server is now
  // quarantined (otherwise it backs off).
  fail(error: unknown): "backoff" | "quarantined" {
    this.down();
    this.count += 1;
    this.last = error;
    if (this.count >= this.limits.maxFailures) return "quarantined";
    const { backoffInitialMs, backoffFactor, backoffMaxMs } = this.limits;
    this.nextStartAt = this.limits.now() + Math.min(backoffMaxMs, backoffInitialMs * backoffFactor ** (this.count - 1));
    return "backoff";
  }

  // Why a start is not allowed now (quarantined, or backing off), if it is not.
  refusal(quarantined: boolean): ServerUnavailableError | undefined {
    if (quarantined) return new ServerUnavailableError("quarantined", this.count, undefined, this.last);
    const wait = this.waitMs;
    return wait > 0 ? new ServerUnavailableError("backoff", this.count, wait, this.last) : undefined;
  }

  // Forgets every failure (a quarantine lifted after an approved change).
  reset(): void {
    this.count = 0;
    this.nextStartAt = 0;
  }
}
