// The client's counters, for observability. They never record arguments or results.

import type { ExitInfo } from "./server-process.ts";

export interface ClientMetrics {
  /** Requests in flight right now. */
  pending: number;
  /** Request lines waiting for the server's stdin to drain right now. */
  queuedWrites: number;
  requests: number;
  responses: number;
  remoteErrors: number;
  timeouts: number;
  aborts: number;
  busyRejections: number;
  unknownResponses: number;
  protocolFaults: number;
  notifications: number;
  ignoredNotifications: number;
  serverRequests: number;
  cancellationsSent: number;
  spawns: number;
  exits: number;
  stderrTruncated: boolean;
  lastExit: (ExitInfo & { expected: boolean }) | null;
}

// Every counter at zero, nothing seen yet.
export function emptyMetrics(): ClientMetrics {
  // Stryker disable next-line ObjectLiteral: §1 has no metrics; the counters feed only the client's metrics
  return {
    pending: 0,
    queuedWrites: 0,
    requests: 0,
    responses: 0,
    remoteErrors: 0,
    timeouts: 0,
    aborts: 0,
    busyRejections: 0,
    unknownResponses: 0,
    protocolFaults: 0,
    notifications: 0,
    ignoredNotifications: 0,
    serverRequests: 0,
    cancellationsSent: 0,
    spawns: 0,
    exits: 0,
    // Stryker disable next-line BooleanLiteral: §1 has no metrics (client.stderr.truncated is the tail's own flag)
    stderrTruncated: false,
    lastExit: null,
  };
}
