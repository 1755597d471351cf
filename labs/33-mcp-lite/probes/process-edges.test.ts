// Rubric probe: 进程 (process), the server's stderr once maxStderrBytes is reached: the client
// keeps reading it (dropping the oldest bytes), so a server that writes a lot to stderr never
// blocks on a full pipe.

import { describe, it } from "vitest";
import { check, initialize, settleWithin, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { start } from "./support-edges.ts";

describe("rubric/process", () => {
  it("keeps reading the server's stderr after maxStderrBytes is reached", async () => {
    const max = 1_024;
    const h = start({}, { maxStderrBytes: max });
    await initialize(h);
    // The server answers once stderr took every byte: far more than a pipe holds.
    const label = "callTool(stderr, 4000000 bytes)";
    const outcome = await settleWithin(h.client.callTool("stderr", { bytes: 4_000_000 }), label);
    const detail = outcome.status === "rejected" ? (outcome.reason?.code ?? String(outcome.reason)) : "";
    check(outcome.status === "fulfilled", pmsg("stderrBlocked", { max, label, detail }));
    await within(h.client.callTool("echo", { value: "still answering" }), "callTool(echo) after the stderr flood");
    // What the tail keeps is homework/bounded-stderr's business.
  });
});
