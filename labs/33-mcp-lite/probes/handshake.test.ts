// Rubric probe: 协议 (handshake). Nothing before initialize; one initialize for concurrent
// callers; notifications/initialized only after the answer; an unsupported protocol
// version fails the handshake and stops the child.

import { describe, it } from "vitest";
import { check, expectCode, initialize, received, rejection, startupRejection, startupWithin, waitFor, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { alivePids, pause, start } from "./support.ts";

function expectNotInitialized(error: any, label: string): void {
  check(error?.code === "MCP_NOT_INITIALIZED", pmsg("notInitializedCode", { label, actual: error?.code ?? String(error) }));
}

describe("rubric/handshake", () => {
  it("rejects listTools and callTool before initialize with MCP_NOT_INITIALIZED and sends nothing", async () => {
    const h = start();
    expectNotInitialized(await rejection(h.client.listTools(), pmsg("lblBeforeInit", { call: "listTools()" })), "listTools()");
    expectNotInitialized(await rejection(h.client.callTool("echo", { value: "too early" }), pmsg("lblBeforeInit", { call: "callTool()" })), "callTool()");
    const early = h.log().filter((entry) => entry.dir === "in" && /^tools\//.test(String(entry.msg?.method)));
    check(early.length === 0, pmsg("wroteBeforeInit", { what: early.map((e) => e.msg.method) }));
  });

  it("sends one initialize for concurrent initialize() calls, and none once initialized", async () => {
    const h = start();
    await startupWithin(h, Promise.all([h.client.initialize(), h.client.initialize(), h.client.initialize()]), pmsg("lblThreeInits"));
    await initialize(h, pmsg("lblInitAgain"));
    await within(h.client.listTools(), "listTools()");
    const inits = received(h.log(), "initialize").length;
    check(inits === 1, pmsg("initializeCount", { count: inits }));
    const notes = received(h.log(), "notifications/initialized").length;
    check(notes === 1, pmsg("initializedCount", { count: notes }));
  });

  it("sends notifications/initialized only after the initialize answer", async () => {
    const ok = start();
    await initialize(ok);
    await within(ok.client.listTools(), "listTools()");
    const log = ok.log();
    const answer = log.findIndex((e) => e.dir === "out" && e.msg?.result?.protocolVersion !== undefined);
    const note = log.findIndex((e) => e.dir === "in" && e.msg?.method === "notifications/initialized");
    check(note !== -1, pmsg("initializedNeverSent"));
    check(note > answer && answer >= 0, pmsg("initializedTooEarly"));
    // Every line is JSON-RPC 2.0 (the seed: each request carries the jsonrpc version), and
    // the notice is a notification: no id.
    const notJsonRpc = log.filter((e) => e.dir === "in" && e.msg?.jsonrpc !== "2.0").map((e) => e.msg);
    check(notJsonRpc.length === 0, pmsg("notJsonRpc2", { what: JSON.stringify(notJsonRpc[0]) }));
    check(!("id" in log[note]!.msg), pmsg("initializedWithId", { what: JSON.stringify(log[note]!.msg) }));

    // A server that never answers initialize must never see notifications/initialized.
    // Checked once the server has read the initialize request (a notification sent with it
    // arrives in the same burst), not after a short client deadline: a slow start could let
    // that deadline stop the server before it read anything at all.
    const silent = start({ scenarios: ["hang-initialize"] });
    const init = startupRejection(silent, pmsg("lblInitNeverAnswered"));
    await waitFor(() => received(silent.log(), "initialize").length === 1, pmsg("lblServerGotInit"));
    await pause(100); // room for a notification written separately, just after the request
    const notes = received(silent.log(), "notifications/initialized");
    check(!silent.client.initialized, pmsg("stillInitialized"));
    // The server runs (it recorded its pid before it read anything): the client has a pid to
    // report. (Which process it names is rubric/process's: a shell's, where one was used.)
    check(typeof silent.client.pid === "number", pmsg("pidDuringHandshake", { actual: String(silent.client.pid) }));
    await within(silent.client.close(), "close()");
    await init;
    check(notes.length === 0, pmsg("initializedWithoutAnswer"));
  });

  it("fails the handshake on an unsupported protocol version, sends no notifications/initialized and stops the child", async () => {
    const h = start({ scenarios: ["bad-version"] });
    expectCode(await startupRejection(h, pmsg("lblInitBadVersion")), "MCP_PROTOCOL_ERROR", pmsg("lblInitBadVersion"));
    check(!h.client.initialized, pmsg("stillInitialized"));
    check(received(h.log(), "notifications/initialized").length === 0, pmsg("initializedWithoutAnswer"));
    await waitFor(() => alivePids(h).length === 0, pmsg("childNotStopped", { pids: h.pids().join(", ") })).catch(() => {
      throw new Error(pmsg("childNotStopped", { pids: alivePids(h).join(", ") }));
    });
    expectNotInitialized(await rejection(h.client.listTools(), pmsg("lblAfterFailedHandshake", { call: "listTools()" })), "listTools()");
    // A version newer than any the client supports is no more supported than an older one:
    // the server answers the one version it knows, "2099-01-01".
    const later = start({ protocolVersions: [LATER_VERSION] });
    expectCode(await startupRejection(later, pmsg("lblInitLaterVersion", { version: LATER_VERSION })), "MCP_PROTOCOL_ERROR", pmsg("lblInitLaterVersion", { version: LATER_VERSION }));
    check(!later.client.initialized, pmsg("stillInitialized"));
  });
});

/** A protocol version no client of this lab supports: later than every published one. */
const LATER_VERSION = "2099-01-01";
