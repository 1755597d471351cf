// What the six evidence files share: a client under test started against a fresh fixture
// workspace, and a value check with a learner-facing message. One copy of each test lives in
// tests/evidence/; "#submission" points at the starter, the solution or a learner's folder.
// Every ordering is decided by the fixture server (it holds and releases answers), never by
// racing timers; the only deadlines are hang detectors a correct client never comes near.

import { McpClient } from "#submission/src/mcp-client.ts";
import { msg } from "../messages.ts";
import { check, harness } from "../support.ts";

export function start(fixture: Parameters<typeof harness>[1] = {}, timeoutMs = 10_000) {
  return harness((command) => new McpClient({ ...command, timeoutMs }), fixture);
}

export function expectValue(actual: unknown, expected: unknown, label: string): void {
  check(JSON.stringify(actual) === JSON.stringify(expected), msg("wrongValue", { label, expected, actual }));
}
