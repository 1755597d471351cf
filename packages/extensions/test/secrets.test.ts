// Secrets: given to the server through env only, and replaced by [REDACTED] in everything
// the client emits: the stderr tail, error messages and data, trace events, fault reports.
import { describe, expect, it } from "vitest";
import { McpError, McpClient, REDACTED } from "../src/mcp-client.ts";
import { Redactor } from "../src/redact.ts";
import { startTraced, waitFor } from "./support.ts";

const SECRET = "sk-live-7Hq2Zp9Xw4Kd8Ls1Vb6N"; // 28 characters

// No run of `min` or more characters of the secret appears in the text.
function leaksNothing(text: string, min = 4): void {
  for (let start = 0; start + min <= SECRET.length; start += 1) expect(text).not.toContain(SECRET.slice(start, start + min));
}

describe("secrets reach the server only through env", () => {
  it("a secret in args (whole or inside an argument) is refused by the constructor, without echoing it", () => {
    for (const args of [["--token", SECRET], [`--token=${SECRET}`]]) {
      let thrown: unknown;
      try {
        new McpClient({ executable: process.execPath, args, secrets: [SECRET] });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(McpError);
      expect(thrown).toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: expect.stringMatching(/args\[\d\] contains a secret/) });
      leaksNothing((thrown as Error).message);
    }
    expect(() => new McpClient({ executable: `/opt/${SECRET}/server`, secrets: [SECRET] })).toThrow(/executable contains a secret/);
    expect(() => new McpClient({ executable: "node", secrets: [""] })).toThrow(/secrets\[0\] must be a non-empty string/);
    expect(() => new McpClient({ executable: "node", secrets: "x" as never })).toThrow(/secrets must be an array/);
  });

  it("the server gets it in its environment and nowhere in its argv", async () => {
    const { client } = startTraced({}, { secrets: [SECRET], env: { API_TOKEN: SECRET } });
    await client.initialize();
    const seen = (await client.callTool("inspect")) as { content?: unknown; argv: string[]; env: Record<string, string> };
    expect(seen.env.API_TOKEN).toBe(SECRET);
    expect(seen.argv.join(" ")).not.toContain(SECRET);
  });
});

describe("secrets are redacted", () => {
  it("in the stderr tail when the secret arrives split across two writes, including while only its first half has arrived", async () => {
    const { client } = startTraced({}, { secrets: [SECRET], env: { API_TOKEN: SECRET } });
    await client.initialize();
    await client.callTool("stderr", { text: `token=${SECRET.slice(0, 12)}` });
    await waitFor(() => client.stderr.text.startsWith("token="), "the first half on stderr");
    expect(client.stderr.text).toBe(`token=${REDACTED}`); // a tail's end may be cut: a trailing prefix is redacted
    await client.callTool("stderr", { text: `${SECRET.slice(12)} accepted\n` });
    await waitFor(() => client.stderr.text.endsWith("accepted\n"), "the second half on stderr");
    expect(client.stderr.text).toBe(`token=${REDACTED} accepted\n`);
  });

  it("in a truncated tail whose cut falls inside the secret, and in the exit error and its report", async () => {
    const { client } = startTraced({}, { secrets: [SECRET], env: { API_TOKEN: SECRET }, maxStderrBytes: 64 });
    await client.initialize();
    // The last 64 bytes start 23 characters before the secret's end.
    const text = `${"x".repeat(200)}${SECRET}${"y".repeat(40)}\n`;
    const error = (await client.callTool("exit", { code: 4, stderr: text }).catch((e: unknown) => e)) as McpError;
    expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT", stderrTruncated: true });
    expect(error.stderr).toBe(`${REDACTED}${"y".repeat(40)}\n`);
    expect(client.stderr).toEqual({ text: `${REDACTED}${"y".repeat(40)}\n`, truncated: true });
    expect(error.report().stderr.tail).toBe(error.stderr);
    leaksNothing(JSON.stringify(error.report()));
  });

  it("in error messages and error data, in the trace and in fault reports", async () => {
    const trace: unknown[] = [];
    const { client } = startTraced({}, { secrets: [SECRET], env: { API_TOKEN: SECRET }, onTrace: (event) => trace.push(event) });
    await client.initialize();
    const remote = (await client.callTool("fail", { message: `auth failed for ${SECRET}`, data: { token: SECRET, [SECRET]: 1 } }).catch((e: unknown) => e)) as McpError;
    expect(remote.message).toContain(`auth failed for ${REDACTED}`);
    expect(remote.data).toEqual({ token: REDACTED, [REDACTED]: 1 });
    const unknownTool = (await client.callTool(`tool-${SECRET}`).catch((e: unknown) => e)) as McpError;
    expect(unknownTool).toMatchObject({ code: "MCP_ERROR" });
    const controller = new AbortController();
    const aborted = client.callTool("never", {}, { signal: controller.signal });
    controller.abort(new Error(`stop, the key ${SECRET} leaked`));
    const abortError = (await aborted.catch((e: unknown) => e)) as McpError;
    expect(abortError).toMatchObject({ code: "MCP_ABORTED", reason: "user" });
    for (const error of [remote, unknownTool, abortError]) {
      leaksNothing(error.message);
      leaksNothing(JSON.stringify(error.report()));
    }
    expect(trace).toContainEqual(expect.objectContaining({ kind: "request", tool: `tool-${REDACTED}` }));
    leaksNothing(JSON.stringify(trace));
  });
});

describe("Redactor", () => {
  const redactor = new Redactor(["abcdef", "abc"]);

  it("replaces the longest secret at each position and leaves other text alone", () => {
    expect(redactor.redact("x abcdef y abc z ab")).toBe(`x ${REDACTED} y ${REDACTED} z ab`);
    expect(new Redactor().redact("abcdef")).toBe("abcdef");
    expect(redactor.redact("")).toBe("");
  });

  it("replaces a fragment only at an edge that was cut or is still open", () => {
    const redactor = new Redactor(["abcdef"]);
    expect(redactor.redact("def tail", { headCut: true })).toBe(`${REDACTED} tail`);
    expect(redactor.redact("def tail")).toBe("def tail");
    expect(redactor.redact("head abcd", { open: true })).toBe(`head ${REDACTED}`);
    expect(redactor.redact("head abcd")).toBe("head abcd");
  });

  it("walks JSON values, keys included", () => {
    expect(redactor.redactValue({ a: ["abc", 1, null], abcdef: true })).toEqual({ a: [REDACTED, 1, null], [REDACTED]: true });
    expect(new Redactor().redactValue({ a: "abc" })).toEqual({ a: "abc" });
  });
});
