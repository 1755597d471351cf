// --format gradescope: Gradescope's autograder results.json. One "test" per check; the
// homework bonus appears as extra tests worth their points (Gradescope adds them up).

import type { GradeResult } from "../result.ts";

export function renderGradescope(result: GradeResult): string {
  const tests = result.checks.map((c) => ({
    name: `${c.id} — ${c.title}`,
    score: c.score,
    max_score: c.maxScore,
    status: c.status === "pass" ? "passed" : "failed",
    output: [c.message, c.hint ? `\n${c.hint}` : "", c.lesson ? `\n${c.lesson}` : ""].join(""),
    visibility: "visible",
  }));
  const header = `${result.lab}: ${result.status} · seed ${result.seed}${result.message ? `\n${result.message}` : ""}`;
  return `${JSON.stringify(
    {
      score: result.score + result.bonus.score,
      output: header,
      execution_time: Math.round(result.durationMs / 1000),
      visibility: "visible",
      stdout_visibility: "hidden",
      tests,
    },
    null,
    2,
  )}\n`;
}
