// The client under test as the lab's tests see it in a grade: CONTRACT §1's McpClient and
// McpError, each method and getter forwarded to the submission's real client, which lives in
// a host process of its own (channel.ts, host-main.ts). The tests import this module as
// "#submission/src/mcp-client.ts" and read exactly as they would against the real thing;
// nothing of the submission is ever loaded in the test worker.

import { decodeValue, hostChannel, rebuild, workerPid, type HostChannel } from "./channel.ts";
import { idFor } from "./signals.ts";
import { packArgs, type Encoded } from "./wire.ts";

export class McpError extends Error {
  declare readonly code: string;
  declare readonly remoteCode?: number;
  declare readonly data?: unknown;
  declare readonly exitCode?: number | null;
  declare readonly signal?: string | null;
  declare readonly stderr?: string;
  constructor(message: string) {
    super(message);
    this.name = "McpError";
  }
}

const asError = (encoded: any) => rebuild(encoded, (message) => (encoded?.mcp ? new McpError(message) : new Error(message)));

// Signals are mirrored in the host: each caller's signal gets an id (signals.ts), and its
// abort is forwarded (in order with every other request) the moment it fires here.
export { signalId } from "./signals.ts";

function placeholder(channel: HostChannel, signal: AbortSignal) {
  const { id, isNew } = idFor(signal);
  if (isNew && !signal.aborted) signal.addEventListener("abort", () => void channel.send({ t: "abort", signal: id, args: packArgs([signal.reason]) }), { once: true });
  return { $signal: id, aborted: signal.aborted, reason: signal.aborted ? String(signal.reason) : undefined };
}

function withSignals(channel: HostChannel, args: unknown[]): unknown[] {
  return args.map((arg) => {
    if (!arg || typeof arg !== "object" || Array.isArray(arg) || !("signal" in arg)) return arg;
    const { signal } = arg as { signal?: unknown };
    return signal instanceof AbortSignal ? { ...arg, signal: placeholder(channel, signal) } : arg;
  });
}

// Functions in the constructor's options (a homework's onNotification, say) stay here; the
// host gets a stand-in that reports each call, in order with everything else.
let nextFn = 0;
function withCallbacks(channel: HostChannel, args: unknown[]): unknown[] {
  return args.map((arg) => {
    if (!arg || typeof arg !== "object" || Array.isArray(arg)) return arg;
    const copy: Record<string, unknown> = { ...(arg as Record<string, unknown>) };
    for (const [key, value] of Object.entries(copy)) {
      if (typeof value !== "function") continue;
      const id = ++nextFn;
      channel.callbacks.set(id, value as (...a: unknown[]) => unknown);
      copy[key] = { $fn: id };
    }
    return copy;
  });
}

/** A value the submission's entry module exports besides the classes (read once, at import). */
function exported<T>(name: string): T | undefined {
  try {
    const reply = hostChannel().request({ t: "export", name });
    return (reply.ok ? decodeValue(reply.value) : undefined) as T;
  } catch {
    // No host could start (no submission to host): the export is missing, as it would be.
    return undefined;
  }
}

export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] | undefined = exported("SUPPORTED_PROTOCOL_VERSIONS");

let nextClient = 0;

export class McpClient {
  readonly #channel: HostChannel;
  readonly #id = ++nextClient;

  constructor(...args: unknown[]) {
    this.#channel = hostChannel();
    const reply = this.#channel.request({ t: "new", client: this.#id, args: packArgs(withCallbacks(this.#channel, args)) });
    if (!reply.ok) throw asError(reply.error);
  }

  #state(key: string): unknown {
    const reply = this.#channel.request({ t: "get", client: this.#id });
    if (!reply.ok) throw asError(reply.error);
    const field = reply.state?.[key] as Encoded | { threw: unknown } | undefined;
    if (field && typeof field === "object" && "threw" in field) throw asError(field.threw);
    return decodeValue(field as Encoded);
  }

  get pendingCount(): number {
    return this.#state("pendingCount") as number;
  }
  // The client reports a pid of its host's namespace; the tests check it from theirs.
  get pid(): number | undefined {
    const pid = this.#state("pid") as number | undefined;
    return typeof pid === "number" ? workerPid(pid) : pid;
  }
  get initialized(): boolean {
    return this.#state("initialized") as boolean;
  }
  get stderr(): { text: string; truncated: boolean } {
    return this.#state("stderr") as { text: string; truncated: boolean };
  }

  async #call(op: string, args: unknown[]): Promise<any> {
    const outcome = await this.#channel.send({ t: "call", client: this.#id, op, args: packArgs(withSignals(this.#channel, args)) });
    if (outcome.ok) return decodeValue(outcome.value);
    throw asError(outcome.error);
  }

  initialize(...args: unknown[]): Promise<any> {
    return this.#call("initialize", args);
  }
  listTools(...args: unknown[]): Promise<any[]> {
    return this.#call("listTools", args);
  }
  callTool(...args: unknown[]): Promise<unknown> {
    return this.#call("callTool", args);
  }
  close(...args: unknown[]): Promise<void> {
    return this.#call("close", args);
  }
}
