// The model's side step for answer shapes the fixture never sends, on a scripted server (own
// client, own server; see side.ts). First the odd but valid ones, on one server: a result that
// is null (resolved as sent), an error whose data is 0 or null (kept as sent), an error answer
// whose id is null or unknown (it settles nothing, so the call still gets its own answer), an
// error code of 0 (kept in remoteCode), and an answer followed by a line that is no JSON while
// nothing is pending (a fault all the same: the server is stopped). Then, each on a
// fresh server started by the next initialize(), the lines that break JSON-RPC 2.0 in a way a
// loose check lets through: a batch, "jsonrpc" as a number or missing, a notification of
// JSON-RPC 1.0, an error code that is no integer, an error without a message. Each of those
// must end its call in MCP_PROTOCOL_ERROR, leave initialized false and stop the server.

import { scriptedCommand } from "../scripted-server.ts";
import { SPARE_TIMEOUT_MS } from "../../tests/support.ts";
import { settled } from "../support-edges.ts";
import { expectOutcome } from "./expect.ts";
import { noted } from "../../tests/messages.ts";
import { mmsg } from "./messages.ts";
import { expectThat, settle, type Dimension } from "./model.ts";
import { expectInitialized, SideStep } from "./side.ts";
import { faultStopped, protocolFault } from "./side-close.ts";

/** A JSON-RPC 2.0 answer line for the request being answered ($ID is its id). */
const answer = (body: string) => `{"jsonrpc":"2.0","id":$ID,${body}}`;

/** Valid answers a loose client mistakes: the tool, the lines sent, what the call must end with, and the note shown. */
const ODD: Array<{ tool: string; lines: string[]; expected: { value: unknown } | { code: string; data: unknown; remoteCode?: number }; note: string }> = [
  { tool: "null-result", lines: [answer('"result":null')], expected: { value: null }, note: "noteNullResult" },
  { tool: "data-zero", lines: [answer('"error":{"code":-32001,"message":"zero","data":0}')], expected: { code: "MCP_ERROR", data: 0 }, note: "noteDataZero" },
  { tool: "data-null", lines: [answer('"error":{"code":-32001,"message":"null","data":null}')], expected: { code: "MCP_ERROR", data: null }, note: "noteDataNull" },
  {
    tool: "id-null-first",
    lines: ['{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', answer('"result":{"content":"after"}')],
    expected: { value: { content: "after" } },
    note: "noteIdNullFirst",
  },
  {
    tool: "id-unknown-first",
    lines: ['{"jsonrpc":"2.0","id":9999,"error":{"code":-32000,"message":"stray"}}', answer('"result":{"content":"after"}')],
    expected: { value: { content: "after" } },
    note: "noteIdUnknownFirst",
  },
  { tool: "code-zero", lines: [answer('"error":{"code":0,"message":"zero code"}')], expected: { code: "MCP_ERROR", data: undefined, remoteCode: 0 }, note: "noteCodeZero" },
];

/** A valid answer, then a line that is no JSON while nothing is pending: a fault all the same. */
const IDLE_FAULT = { tool: "then-garbage", lines: [answer('"result":{"content":"ok"}'), "ready"], note: "noteIdleGarbage" };

/** Lines that are not JSON-RPC 2.0 (each a protocol fault), with the note shown. */
const FAULTY: Array<{ tool: string; lines: string[]; note: string }> = [
  { tool: "batch", lines: ['[{"jsonrpc":"2.0","id":$ID,"result":{"content":"batched"}}]'], note: "noteBatch" },
  { tool: "jsonrpc-number", lines: ['{"jsonrpc":2,"id":$ID,"result":{"content":"two"}}'], note: "noteJsonrpcNumber" },
  { tool: "jsonrpc-missing", lines: ['{"id":$ID,"result":{"content":"bare"}}'], note: "noteJsonrpcMissing" },
  { tool: "notice-1-0", lines: ['{"jsonrpc":"1.0","method":"notifications/message","params":{"level":"info","data":"old"}}', answer('"result":{"content":"after"}')], note: "noteNotice10" },
  { tool: "code-fraction", lines: [answer('"error":{"code":1.5,"message":"half"}')], note: "noteCodeFraction" },
  { tool: "no-message", lines: [answer('"error":{"code":-32001}')], note: "noteNoMessage" },
];

const ANSWERS = Object.fromEntries([...ODD, IDLE_FAULT, ...FAULTY].map(({ tool, lines }) => [`tools/call:${tool}`, { raw: lines }]));

const label = (tool: string, note: string) => noted(`callTool("${tool}")`, mmsg(note as never));

export class ScriptedAnswers extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS }, (ws) => scriptedCommand(ws, ANSWERS), async (side) => {
      await expectInitialized(side);
      for (const odd of ODD) {
        const step = label(odd.tool, odd.note);
        const outcome = await settle(settled(Promise.resolve().then(() => side.client.callTool(odd.tool, {}))), step);
        if ("value" in odd.expected) {
          expectOutcome(outcome, { value: odd.expected.value }, "rubric/handshake", step);
          continue;
        }
        expectOutcome(outcome, { code: odd.expected.code }, "rubric/handshake", step);
        const data = outcome.status === "rejected" ? outcome.reason?.data : undefined;
        if (odd.expected.data !== undefined) expectThat(Object.is(data, odd.expected.data), "rubric/handshake", "outcome", { step: `${step}: McpError.data`, expected: JSON.stringify(odd.expected.data), actual: data === undefined ? "undefined" : JSON.stringify(data) });
        const remoteCode = outcome.status === "rejected" ? outcome.reason?.remoteCode : undefined;
        if (odd.expected.remoteCode !== undefined) expectThat(remoteCode === odd.expected.remoteCode, "rubric/handshake", "outcome", { step: `${step}: McpError.remoteCode`, expected: String(odd.expected.remoteCode), actual: remoteCode === undefined ? "undefined" : JSON.stringify(remoteCode) });
      }
      // The call resolves; the line after it is a fault with nothing pending: the server stopped all the same.
      const idle = label(IDLE_FAULT.tool, IDLE_FAULT.note);
      expectOutcome(await settle(settled(Promise.resolve().then(() => side.client.callTool(IDLE_FAULT.tool, {}))), idle), { value: { content: "ok" } }, "rubric/handshake", idle);
      await faultStopped(side, idle);
      for (const fault of FAULTY) {
        // After each fault the server is gone: the next initialize() starts a fresh one.
        await expectInitialized(side, mmsg("freshServer"));
        const step = label(fault.tool, fault.note);
        await protocolFault(side, step, () => side.client.callTool(fault.tool, {}));
      }
    });
  }
  toString(): string {
    return mmsg("scriptedAnswersStep", { odd: [...ODD, IDLE_FAULT].map((o) => `callTool("${o.tool}")`).join(", "), faults: FAULTY.map((f) => `callTool("${f.tool}")`).join(", ") });
  }
}
