// --format exercism: the Exercism test-runner interface, results.json version 3
// (exercism.org/docs/building/tooling/test-runners/interface). One test per check, in the
// lab's order, with its status, its message (and hint) when it did not pass, and test_code =
// the source of the describe block behind it. The top-level status is "error" when no test
// ran properly: the submission did not load or compile (no tests listed), or every listed
// check errored (the interface: "error" only when all tests errored); otherwise "fail" as soon
// as one check did not pass. The top-level message is capped at the interface's 65 535, counted
// in UTF-8 bytes (the interface notes that multi-byte characters make the limit shorter).
// Homework checks (bonus) are not listed: the interface has no notion of optional tests.

import type { GradeResult } from "../grade-result.ts";
import { describeSources } from "./test-source.ts";

/** The interface's cap on the top-level message, in UTF-8 bytes. */
export const EXERCISM_MESSAGE_MAX_BYTES = 65_535;

export function renderExercism(result: GradeResult): string {
  const graded = result.checks.filter((c) => c.kind !== "homework");
  const noneRan = result.status === "error" && result.checks.every((c) => c.tests.length === 0);
  if (noneRan) return json({ version: 3, status: "error", message: cutUtf8(result.message ?? "could not grade", EXERCISM_MESSAGE_MAX_BYTES), tests: [] });
  // Homework is bonus with no place in the interface's pass/fail: it is left out here.
  const tests = graded.map((c) => {
    const code = describeSources(result.lab, c.id);
    const test: Record<string, unknown> = {
      name: `${c.id}: ${c.title}`,
      status: c.status,
      test_code: code.length > 0 ? code.join("\n\n") : `// ${c.id}: ${c.standard}\n// (checked by the grader itself after the tests, not by a test file)`,
    };
    if (c.status !== "pass") test.message = [c.message, c.hint].filter(Boolean).join("\n");
    return test;
  });
  if (graded.length > 0 && graded.every((c) => c.status === "error")) {
    const message = result.message ?? graded.map((c) => `${c.id}: ${c.message}`).join("\n");
    return json({ version: 3, status: "error", message: cutUtf8(message, EXERCISM_MESSAGE_MAX_BYTES), tests });
  }
  return json({ version: 3, status: result.status === "pass" ? "pass" : "fail", tests });
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

// The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never cutting a character.
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // bytes[end] is the first byte left out; while it continues a character, that character is cut.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}
