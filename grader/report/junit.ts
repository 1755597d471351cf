// --format junit: one <testsuite> per check kind, one <testcase> per test (or per check
// when it has no tests of its own), for CI systems that read JUnit XML.

import type { GradeResult } from "../result.ts";

export function renderJunit(result: GradeResult): string {
  const kinds = [...new Set(result.checks.map((c) => c.kind))];
  const suites = kinds.map((kind) => {
    const cases: string[] = [];
    let failures = 0;
    let errors = 0;
    for (const c of result.checks.filter((x) => x.kind === kind)) {
      const tests = c.tests.length > 0 ? c.tests : [{ title: c.title, status: c.status === "pass" ? "pass" : "fail", message: c.message, durationMs: 0 }];
      for (const t of tests) {
        const time = ((t.durationMs ?? 0) / 1000).toFixed(3);
        let body = "";
        if (c.status === "error" && c.tests.length === 0) {
          errors += 1;
          body = `<error message="${attr(c.message)}"/>`;
        } else if (t.status === "fail") {
          failures += 1;
          body = `<failure message="${attr(t.message ?? c.message)}">${text([t.message ?? c.message, c.hint ?? ""].join("\n"))}</failure>`;
        } else if (t.status === "skip") {
          body = "<skipped/>";
        }
        cases.push(`    <testcase classname="${attr(c.id)}" name="${attr(t.title)}" time="${time}">${body}</testcase>`);
      }
    }
    return `  <testsuite name="${attr(`${result.lab} ${kind}`)}" tests="${cases.length}" failures="${failures}" errors="${errors}">\n${cases.join("\n")}\n  </testsuite>`;
  });
  const status = result.status === "error" ? `\n  <!-- could not grade: ${text(result.message ?? "").replace(/--/g, "- -")} -->` : "";
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${attr(result.lab)}" time="${(result.durationMs / 1000).toFixed(3)}">${status}\n  <properties><property name="seed" value="${result.seed}"/><property name="status" value="${result.status}"/><property name="score" value="${result.score}/${result.maxScore}"/></properties>\n${suites.join("\n")}\n</testsuites>\n`;
}

function text(value: string): string {
  return value.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");
}

function attr(value: string): string {
  return text(value).replace(/"/g, "&quot;").replace(/\n/g, "&#10;");
}
