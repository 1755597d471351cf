// What the client lets the server say unasked: a per-second budget for notifications and
// server requests (a server over it is flooding), and the notifications that the handshake
// actually negotiated. Pure: no process, no timers.

import { isPlainObject, isRequestId } from "./protocol.ts";

// Counts unsolicited lines in one-second windows, by number and by bytes.
export class UnsolicitedBudget {
  private readonly maxPerSecond: number;
  private readonly maxBytesPerSecond: number;
  private windowStart = 0;
  private count = 0;
  private bytes = 0;

  constructor(maxPerSecond: number, maxBytesPerSecond: number) {
    this.maxPerSecond = maxPerSecond;
    this.maxBytesPerSecond = maxBytesPerSecond;
  }

  // Records one line; returns why it is over budget, or undefined when it is within.
  admit(lineBytes: number, now = Date.now()): string | undefined {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.count = 0;
      this.bytes = 0;
    }
    this.count += 1;
    this.bytes += lineBytes;
    if (this.count > this.maxPerSecond) {
      return `notification flood: more than ${this.maxPerSecond} per second (maxNotificationsPerSecond)`;
    }
    if (this.bytes > this.maxBytesPerSecond) {
      return `notification flood: more than ${this.maxBytesPerSecond} bytes per second (maxNotificationBytesPerSecond)`;
    }
    return undefined;
  }
}

// Only what was negotiated is passed on: progress whose token names a request in flight,
// log messages when the server declared `logging`, tools/list_changed when it declared
// `tools.listChanged`. Everything else is ignored (and counted by the caller).
export function isNegotiated(
  method: string,
  params: unknown,
  capabilities: Record<string, unknown> | undefined,
  isPending: (id: number) => boolean,
): boolean {
  switch (method) {
    case "notifications/progress": {
      const token = isPlainObject(params) ? params.progressToken : undefined;
      return isRequestId(token) && isPending(token);
    }
    case "notifications/message":
      return isPlainObject(capabilities?.logging);
    case "notifications/tools/list_changed": {
      const tools = capabilities?.tools;
      return isPlainObject(tools) && tools.listChanged === true;
    }
    default:
      return false;
  }
}
