// The instructor demos show what they promise: each runs in-process against the fixture,
// and its observed facts (not its narration) are checked. One CLI run proves the npm script
// wiring. Orderings come from the fixture (`echo after`, `never`, `exit`); the only
// deadline is the demo's own cut-off for promises that never settle.

import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../fixtures/index.ts";
import { DEMOS } from "../../docs/demos/cases/index.ts";
import { runDemo, type DemoResult } from "../../docs/demos/demo.ts";
import type { Lang } from "../../docs/demos/i18n.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

// Runs one demo in-process and checks what every demo promises: it showed what it said it
// would (ok) and reaped every process it started. Returns what it observed and printed.
async function shown(id: string, lang: Lang = "zh"): Promise<{ facts: any; output: string }> {
  const demo = DEMOS.find((d) => d.id === id);
  if (!demo) throw new Error(`no demo ${id}`);
  const lines: string[] = [];
  // The cut-off must never catch McpClient (whose answers take milliseconds) on a loaded
  // machine; it only costs time where a naive client hangs by design.
  const result = await runDemo(demo, { lang, out: (line) => lines.push(line), deadlineMs: 3_000 });
  expect(result.ok).toBe(true);
  expectReaped(result);
  return { facts: result.facts, output: lines.join("\n") };
}

function expectReaped(result: DemoResult): void {
  expect(result.startedPids.length).toBeGreaterThan(0);
  expect(result.survivors).toEqual([]);
  expect(result.startedPids.filter(isAlive)).toEqual([]);
}

describe("demo swap", () => {
  it("shows the slot client leaving slow hanging, the FIFO client swapping, and McpClient matching both", async () => {
    const { facts, output } = await shown("swap");
    expect(facts).toMatchObject({
      slot: { fast: "fast", slow: "hung" },
      fifo: { slow: "fast", fast: "slow" },
      safe: { slow: "slow", fast: "fast" },
      safeClosedClean: true,
    });
    expect(output).toContain("演示在截止时间后放弃等待");
    expect(output).toMatch(/服务端 → 客户端 {2}id=3 result \{"content":"fast"\}/);
  });
});

describe("demo leak", () => {
  it("counts pending entries, timers and listeners climbing to 100 in the naive client and staying at 0 in McpClient", async () => {
    const { facts } = await shown("leak", "en");
    expect(facts.naiveFinal).toMatchObject({ calls: 100, pending: 100, listeners: 100 });
    expect(facts.naiveFinal.timers).toBeGreaterThanOrEqual(100);
    expect(facts.safeFinal).toEqual({ calls: 100, pending: 0, timers: 0, listeners: 0 });
    expect(facts.safe.codes).toEqual({ MCP_TIMEOUT: 100 });
    expect(facts.naive.listenerWarnings).toBeGreaterThan(0);
    expect(facts.safe.listenerWarnings).toBe(0);
  });
});

describe("demo crash", () => {
  it("shows every naive call hanging and every McpClient call rejected with MCP_PROCESS_EXIT, code 7 and stderr", async () => {
    const { facts } = await shown("crash");
    expect(facts.naive.map((n: any) => n.outcome)).toEqual(["hung", "hung", "hung"]);
    expect(facts.naivePending).toBe(3);
    expect(facts.safe).toHaveLength(3);
    for (const error of facts.safe) expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT" });
    expect(facts.safe.some((e: any) => e.exitCode === 7 && String(e.stderr).includes("disk on fire"))).toBe(true);
    expect(facts.afterExit).toEqual({ initialized: false, pendingCount: 0 });
    expect(facts.restarted).toBe(true);
  });
});

describe("demo orphan", () => {
  it("shows the naive close leaving a live pid and a live grandchild, and McpClient's close leaving none", async () => {
    const { facts } = await shown("orphan");
    expect(facts.naiveTerm.aliveLater).toHaveLength(1);
    expect(facts.safeTerm.aliveWhenCloseReturned).toEqual([]);
    expect(facts.naiveGrand.aliveLater).toEqual([facts.naiveGrand.pids[1]]);
    expect(facts.safeGrand.pids).toHaveLength(2);
    expect(facts.safeGrand.aliveWhenCloseReturned).toEqual([]);
  });
});

describe("npm run demo", () => {
  it("lists every case with what it shows when no case is given, in Chinese and in English", () => {
    const zh = spawnSync("npm", ["run", "--silent", "demo"], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(zh.status).toBe(0);
    for (const demo of DEMOS) expect(zh.stdout).toContain(demo.shows.zh);
    const en = spawnSync("npm", ["run", "--silent", "demo", "--", "--lang", "en"], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(en.status).toBe(0);
    for (const demo of DEMOS) expect(en.stdout).toContain(demo.shows.en);
  });

  it("refuses an unknown case with exit status 2", () => {
    const out = spawnSync("npm", ["run", "--silent", "demo", "--", "no-such-demo"], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("no-such-demo");
  });
});
