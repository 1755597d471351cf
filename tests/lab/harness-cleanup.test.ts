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

type Make = (command: { executable: string; args: string[] }) => never;
const harnesses: Array<[string, (make: Make) => unknown]> = [
  ["evidence harness", (make) => harness(make)],
  ["probe harness", (make) => probeHarness(make)],
];

describe("the lab harness and a constructor that throws", () => {
  for (const [name, start] of harnesses) {
    let folder: string | undefined;

    it(`passes the constructor's error on (${name})`, () => {
      const refuse: Make = (command) => {
        folder = workspaceOf(command);
        throw new Error("bad options");
      };
      expect(() => start(refuse)).toThrow("bad options");
      expect(existsSync(folder!)).toBe(true);
    });

    it(`has removed that workspace once the test finished (${name})`, () => {
      expect(folder).toBeDefined();
      expect(existsSync(folder!)).toBe(false);
    });
  }
});
