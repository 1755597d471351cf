// --format exercism: the Exercism test-runner interface, results.json version 3. One test
// per check, in the lab's order, with its status, its message (and hint) when it did not
// pass, and test_code = the source of the describe block behind it. The top-level status is
// "error" only when no test could run at all (the submission did not load or compile);
// a run that broke part-way keeps the checks that did run and marks the rest "error".
// Homework checks (bonus) are not listed: the interface has no notion of optional tests.

import type { GradeResult } from "../grade-result.ts";
import { describeSources } from "./test-source.ts";

/** The interface's cap on the top-level message, in characters. */
export const EXERCISM_MESSAGE_MAX = 65_535;

export function renderExercism(result: GradeResult): string {
  const noneRan = result.status === "error" && result.checks.every((c) => c.tests.length === 0);
  if (noneRan) {
    const message = (result.message ?? "could not grade").slice(0, EXERCISM_MESSAGE_MAX);
    return `${JSON.stringify({ version: 3, status: "error", message, tests: [] }, null, 2)}\n`;
  }
  // Homework is bonus with no place in the interface's pass/fail: it is left out here.
  const tests = result.checks.filter((c) => c.kind !== "homework").map((c) => {
    const code = describeSources(result.lab, c.id);
    const test: Record<string, unknown> = {
      name: `${c.id}: ${c.title}`,
      status: c.status,
      test_code: code.length > 0 ? code.join("\n\n") : `// ${c.id}: ${c.standard}\n// (checked by the grader itself after the tests, not by a test file)`,
    };
    if (c.status !== "pass") test.message = [c.message, c.hint].filter(Boolean).join("\n");
    return test;
  });
  return `${JSON.stringify({ version: 3, status: result.status === "pass" ? "pass" : "fail", tests }, null, 2)}\n`;
}
