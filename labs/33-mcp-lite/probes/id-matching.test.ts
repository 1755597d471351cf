// Rubric probe: 关联 (id-matching). Beyond the evidence tests: many concurrent calls to the
// same tool answered in a seeded random order, a response with the string id "N", unknown
// ids, duplicates, a late answer after a timeout, and the ids themselves.

import { describe, it } from "vitest";
import { check, expectCode, initialize, needs, received, rejection, waitFor, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { SEED, start } from "./support.ts";

function expectAnswer(actual: unknown, value: unknown, label: string): void {
  const expected = { content: value };
  check(JSON.stringify(actual) === JSON.stringify(expected), pmsg("wrongAnswer", { label, expected, actual }));
}

const CONCURRENT_CALLS = 16;

describe("rubric/id-matching", () => {
  it(`answers ${CONCURRENT_CALLS} concurrent calls to one tool, released in a seeded random order, each to its own caller`, async () => {
    const h = start();
    await initialize(h);
    // The server holds every call until all have arrived, then answers them in one burst,
    // shuffled by the seed: neither arrival order nor the tool name can tell them apart.
    const batch = { id: "burst", size: CONCURRENT_CALLS, order: "shuffle", seed: SEED };
    const calls = Array.from({ length: CONCURRENT_CALLS }, (_, i) => h.client.callTool("echo", { value: `call-${i}`, batch }));
    const answers = await within(Promise.all(calls), pmsg("lblConcurrentEcho", { count: CONCURRENT_CALLS }));
    answers.forEach((answer, i) => expectAnswer(answer, `call-${i}`, pmsg("lblEchoCall", { n: i })));
  });

  it('settles nothing with a string id "N", an unknown id, a repeated answer or a notification', async () => {
    // Before each real answer the server sends two notifications (no id), an answer and an
    // error answer with id String(id) and one answer with id+1000; after it, a duplicate with the same id.
    const h = start({ scenarios: ["notifications", "string-id", "string-id-error", "unknown-id", "duplicate-id"] });
    await initialize(h);
    expectAnswer(await within(h.client.callTool("echo", { value: "first" }), "callTool(first)"), "first", "callTool(first)");
    expectAnswer(await within(h.client.callTool("echo", { value: "second" }), "callTool(second)"), "second", "callTool(second)");
    const together = ["x", "y", "z"].map((value) => h.client.callTool("echo", { value }));
    const answers = await within(Promise.all(together), pmsg("lblThreeCalls"));
    answers.forEach((answer, i) => expectAnswer(answer, ["x", "y", "z"][i], `callTool(${["x", "y", "z"][i]})`));
    check(h.client.pendingCount === 0, pmsg("pendingLeft", { when: pmsg("whenDuplicates"), count: h.client.pendingCount }));
  });

  it("never hands a late answer, arriving after its call timed out, to a newer call", async () => {
    // This server answers even after a cancellation notice, as one that already finished would.
    const h = start({ scenarios: ["ignore-cancellation"] });
    await initialize(h);
    // The server holds "late" until "release" was answered, so it times out whatever the
    // machine's load, and its answer comes only when the test asks for it. Timing out is
    // TODO(timeout)'s job: when it does not happen, this test says so instead of failing
    // id matching.
    await needs("timeout", async () => {
      const late = await rejection(h.client.callTool("echo", { value: "late", after: "release" }, { timeoutMs: 30 }), "callTool(late, 30 ms)");
      expectCode(late, "MCP_TIMEOUT", "callTool(late, 30 ms)");
    });
    // "fresh" is held until "late" was answered. Answering "release" makes the server send
    // release, late, fresh in one burst: the late answer reaches the client while "fresh"
    // is pending.
    const fresh = h.client.callTool("echo", { value: "fresh", after: "late" });
    expectAnswer(await within(h.client.callTool("echo", { value: "release" }), "callTool(release)"), "release", "callTool(release)");
    expectAnswer(await within(fresh, "callTool(fresh)"), "fresh", "callTool(fresh)");
  });

  it("numbers requests with strictly increasing integer ids and never reuses one", async () => {
    const h = start({ scenarios: ["ignore-cancellation"] });
    await initialize(h);
    await within(h.client.listTools(), "listTools()");
    // Requests that end in a timeout, an abort and a remote error are sent too, but never
    // waited for: their ids count, how (or whether) they settle is other probes' business.
    const sideCalls: Array<Promise<unknown>> = [];
    const side = (call: () => Promise<unknown>) => {
      const p = Promise.resolve().then(call);
      p.catch(() => {});
      sideCalls.push(p);
    };
    side(() => h.client.callTool("echo", { value: "slow", after: "never-sent" }, { timeoutMs: 20 }));
    const aborter = new AbortController();
    side(() => h.client.callTool("never", {}, { signal: aborter.signal }));
    await waitFor(() => received(h.log(), "tools/call").some((m) => m.params?.name === "never"), pmsg("lblServerGotNever"));
    aborter.abort();
    side(() => h.client.callTool("fail", {}));
    for (let i = 0; i < 4; i++) await within(h.client.callTool("echo", { value: i }), `callTool(echo ${i})`);
    const ids = h
      .log()
      .filter((entry) => entry.dir === "in" && entry.msg && typeof entry.msg === "object" && "id" in entry.msg && "method" in entry.msg)
      .map((entry) => entry.msg.id);
    const increasing = ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1]));
    check(ids.length >= 9 && increasing, pmsg("idsNotIncreasing", { ids }));
  });
});
