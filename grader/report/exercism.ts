// --format exercism: the Exercism test-runner interface, results.json version 3. One test
// per check; a could-not-grade result is "error" with its message and no tests.

import type { GradeResult } from "../result.ts";

export function renderExercism(result: GradeResult): string {
  if (result.status === "error") {
    return `${JSON.stringify({ version: 3, status: "error", message: result.message ?? "could not grade", tests: [] }, null, 2)}\n`;
  }
  const tests = result.checks.map((c) => {
    const test: Record<string, unknown> = {
      name: `${c.id}: ${c.title}`,
      status: c.status,
      test_code: c.tests.map((x) => x.title).join("\n"),
    };
    if (c.status !== "pass") test.message = [c.message, c.hint].filter(Boolean).join("\n");
    return test;
  });
  return `${JSON.stringify({ version: 3, status: result.status, tests }, null, 2)}\n`;
}
