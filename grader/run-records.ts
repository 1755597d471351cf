// What a test run left behind, read back: the result channel's records as vitest's results,
// the JSON-lines logs the fixtures and the setup file wrote, and the fixtures' pid files.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { VitestJson } from "./test-records.ts";

// vitest's results, rebuilt from the channel's "file" records (undefined unless the run
// reached its end: "done").
export function resultsFromRecords(records: Array<Record<string, unknown>>): VitestJson | undefined {
  if (!records.some((r) => r.event === "done")) return undefined;
  const status = (state: unknown) => (state === "passed" ? "passed" : state === "failed" ? "failed" : state === "skipped" ? "skipped" : "pending");
  const testResults = records
    .filter((r) => r.event === "file")
    .map((r) => {
      const tests = (r.tests as Array<{ ancestors: string[]; title: string; state: string; duration: number | null; errors: string[] }>) ?? [];
      const errors = (r.errors as string[]) ?? [];
      return {
        name: String(r.file),
        // "pending" after the run ended: the file's worker died before finishing it.
        status: r.state === "passed" ? "passed" : r.state === "failed" || r.state === "skipped" ? "failed" : "crashed",
        message: errors[0] ?? "",
        assertionResults: tests.map((x) => ({
          ancestorTitles: x.ancestors,
          title: x.title,
          fullName: [...x.ancestors, x.title].join(" "),
          status: status(x.state) as VitestJson["testResults"][number]["assertionResults"][number]["status"],
          duration: x.duration,
          failureMessages: x.errors,
        })),
      };
    });
  return { numTotalTests: testResults.reduce((n, f) => n + f.assertionResults.length, 0), success: testResults.every((f) => f.status === "passed"), testResults };
}

export function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  const out: T[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A torn line from a killed writer.
    }
  }
  return out;
}

// Pids in every pid file left under the fixture root (workspaces whose cleanup never ran).
export function recordedPids(fixtureRoot: string): number[] {
  const pids: number[] = [];
  if (!existsSync(fixtureRoot)) return pids;
  for (const dir of readdirSync(fixtureRoot)) {
    const file = join(fixtureRoot, dir, "pids.txt");
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const pid = Number(line.trim());
      if (Number.isInteger(pid) && pid > 0) pids.push(pid);
    }
  }
  return pids;
}

// What the tests left behind (kind "workspaces" or "strays"), from the channel's "end" records:
// the worker's setup file put them in each test's result (child/setup.ts).
export function leftoverRecords<T>(records: Array<Record<string, unknown>>, kind: string): T[] {
  const out: T[] = [];
  for (const r of records) {
    if (r.event !== "end" || !Array.isArray(r.leftovers)) continue;
    for (const item of r.leftovers as Array<{ kind?: unknown; record?: unknown }>) {
      if (item && item.kind === kind && item.record && typeof item.record === "object") out.push(item.record as T);
    }
  }
  return out;
}
