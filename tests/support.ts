// The project's one set of test helpers, shared by tests/client, tests/hardening and the
// @coding-agent/extensions package's tests: one way to start a client on the fixture server
// (the lab harness: a fixture workspace, close and cleanup registered with the test), one
// poll, and one way to catch a rejection. The lab's own tests keep labs/33-mcp-lite/tests/support.ts.
import { McpClient, type McpClientOptions } from "#submission/src/mcp-client.ts";
import { isAlive, type FixtureCommand, type FixtureOptions } from "../fixtures/index.ts";
import {
  harness, installTimerTracker, waitFor as pollWithHangClock, type ClientLike, type Harness,
} from "../labs/33-mcp-lite/tests/support.ts";

// The "project" vitest project has no lab setup file: without this, liveClientTimers()
// always returns [] here and every timer-leak assertion in tests/client passes vacuously.
installTimerTracker();

/** Longest a poll (waitFor) waits before failing the test with its label, in ms: a hang
 *  detector sized for 50 MiB floods on a busy machine. */
export const POLL_MS = 15_000;

/** Default per-request deadline of the clients these helpers start, in ms. */
export const CLIENT_TIMEOUT_MS = 10_000;

export interface Started<C extends ClientLike = McpClient> extends Harness<C> {
  /** The recorded pids still alive (zombies count as gone). */
  alive(): number[];
}

// Starts a client on a fresh fixture workspace; it is closed and everything it started is
// reaped after the test, pass or fail. `make` builds the client from the fixture command
// plus `options` (a 10 s default deadline unless given); by default the reference client.
export function startClient(fixture?: FixtureOptions, options?: Partial<McpClientOptions>): Started<McpClient>;
export function startClient<C extends ClientLike, O extends FixtureCommand>(fixture: FixtureOptions, options: Partial<O>, make: (options: O) => C): Started<C>;
export function startClient(
  fixture: FixtureOptions = {},
  options: object = {},
  make: (options: McpClientOptions) => ClientLike = referenceClient,
): Started<ClientLike> {
  const h = harness((command) => make({ ...command, timeoutMs: CLIENT_TIMEOUT_MS, ...options }), fixture);
  return { ...h, alive: () => h.pids().filter(isAlive) };
}

const referenceClient = (options: McpClientOptions): McpClient => new McpClient(options);

// Polls a condition until it holds; fails the test with `label` after `ms` of the client's
// own time (the lab's hang clock: time this process was starved of CPU does not count).
// Only a hang detector: the outcome a test asserts is never decided by this deadline.
export function waitFor(condition: () => boolean, label: string, ms = POLL_MS): Promise<void> {
  return pollWithHangClock(condition, label, ms);
}

// Resolves with the rejection reason; fails the test when the promise resolves instead.
export async function failure(promise: Promise<unknown>): Promise<any> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}
