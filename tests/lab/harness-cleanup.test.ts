// The lab harness removes every fixture workspace it makes, also when the client's
// constructor throws (a test of bad options): nothing is left in the temp dir either way.
// The cleanup runs once a test has finished, so each case is checked by the test after it.

import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { harness } from "../../labs/33-mcp-lite/tests/support.ts";
import { probeHarness } from "../../labs/33-mcp-lite/probes/support.ts";

/** The workspace folder of a fixture command (its pid file lives there). */
function workspaceOf(command: { args: string[] }): string {
  const at = command.args.indexOf("--pid-file");
  expect(at).toBeGreaterThan(-1);
  return dirname(command.args[at + 1]!);
}

const refused = () => new Error("bad options");
const folders: Record<string, string> = {};

describe("the lab harness and a constructor that throws", () => {
  it("passes the constructor's error on (evidence harness)", () => {
    expect(() =>
      harness((command) => {
        folders.evidence = workspaceOf(command);
        throw refused();
      }),
    ).toThrow("bad options");
    expect(existsSync(folders.evidence!)).toBe(true);
  });

  it("has removed that workspace once the test finished", () => {
    expect(folders.evidence).toBeDefined();
    expect(existsSync(folders.evidence!)).toBe(false);
  });

  it("passes the constructor's error on (probe harness)", () => {
    expect(() =>
      probeHarness((command) => {
        folders.probe = workspaceOf(command);
        throw refused();
      }),
    ).toThrow("bad options");
    expect(existsSync(folders.probe!)).toBe(true);
  });

  it("has removed that workspace too", () => {
    expect(folders.probe).toBeDefined();
    expect(existsSync(folders.probe!)).toBe(false);
  });
});
