// --format gradescope: Gradescope's autograder results.json. One "test" per check; the
// homework bonus appears as extra tests worth their points (Gradescope adds them up).
// Every text field is declared plain text (output_format, test_output_format,
// test_name_format): Gradescope's default renders the output as HTML, which would swallow
// `Map<number, Pending>` and any other angle brackets a message or hint carries.

import type { GradeResult } from "../grade-result.ts";

/** Gradescope's formats for output fields; "text" shows the string as it is. */
export const GRADESCOPE_TEXT = "text";

export function renderGradescope(result: GradeResult): string {
  const tests = result.checks.map((c) => ({
    name: `${c.id} — ${c.title}`,
    score: c.score,
    max_score: c.maxScore,
    status: c.status === "pass" ? "passed" : "failed",
    output: [c.message, c.hint ? `\n${c.hint}` : "", c.lesson ? `\n${c.lesson}` : ""].join(""),
    output_format: GRADESCOPE_TEXT,
    visibility: "visible",
  }));
  const bonus = result.bonus.maxScore > 0 ? ` · bonus ${result.bonus.score}/${result.bonus.maxScore}` : "";
  const header = `${result.lab}: ${result.status} · ${result.score}/${result.maxScore}${bonus} · seed ${result.seed}${result.message ? `\n${result.message}` : ""}`;
  return `${JSON.stringify(
    {
      score: result.score + result.bonus.score,
      output: header,
      output_format: GRADESCOPE_TEXT,
      test_output_format: GRADESCOPE_TEXT,
      test_name_format: GRADESCOPE_TEXT,
      execution_time: Math.round(result.durationMs / 1000),
      visibility: "visible",
      stdout_visibility: "hidden",
      tests,
    },
    null,
    2,
  )}\n`;
}
