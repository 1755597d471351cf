// --format junit: JUnit XML as CI systems read it (the Ant/Jenkins schema). One
// <testsuite> per check kind with its counts, time and the grade's properties; one
// <testcase> per test, plus one for a check that failed or errored without a failing test
// of its own (probe/orphans, a could-not-grade run). Every string is made XML 1.0 safe.

import type { CheckResult, GradeResult, TestOutcome } from "../grade-result.ts";

interface Case {
  check: CheckResult;
  title: string;
  seconds: number;
  outcome: "pass" | "fail" | "error" | "skip";
  message: string;
  detail: string;
}

export function renderJunit(result: GradeResult): string {
  const kinds = [...new Set(result.checks.map((c) => c.kind))];
  const properties = [
    ["lab", result.lab],
    ["status", result.status],
    ["seed", String(result.seed)],
    ["score", `${result.score}/${result.maxScore}`],
    ["bonus", `${result.bonus.score}/${result.bonus.maxScore}`],
    ...(result.message ? [["message", result.message]] : []),
  ];
  const propertiesXml = `    <properties>\n${properties.map(([name, value]) => `      <property name="${attr(name!)}" value="${attr(value!)}"/>`).join("\n")}\n    </properties>`;
  let total = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const suites = kinds.map((kind) => {
    const cases = result.checks.filter((c) => c.kind === kind).flatMap(casesOf);
    const counts = {
      tests: cases.length,
      failures: cases.filter((c) => c.outcome === "fail").length,
      errors: cases.filter((c) => c.outcome === "error").length,
      skipped: cases.filter((c) => c.outcome === "skip").length,
    };
    total = { tests: total.tests + counts.tests, failures: total.failures + counts.failures, errors: total.errors + counts.errors, skipped: total.skipped + counts.skipped };
    const seconds = cases.reduce((sum, c) => sum + c.seconds, 0);
    const body = cases.map(caseXml).join("\n");
    return `  <testsuite name="${attr(`${result.lab} ${kind}`)}" tests="${counts.tests}" failures="${counts.failures}" errors="${counts.errors}" skipped="${counts.skipped}" time="${seconds.toFixed(3)}" timestamp="${attr(result.startedAt.replace(/Z$/, ""))}">\n${propertiesXml}\n${body}\n  </testsuite>`;
  });
  const head = `<testsuites name="${attr(result.lab)}" tests="${total.tests}" failures="${total.failures}" errors="${total.errors}" skipped="${total.skipped}" time="${(result.durationMs / 1000).toFixed(3)}">`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${head}\n${suites.join("\n")}\n</testsuites>\n`;
}

// The test cases of one check: its own tests, plus one standing for the check itself when
// the check did not pass but none of its tests says why.
function casesOf(check: CheckResult): Case[] {
  const cases: Case[] = check.tests.map((t: TestOutcome) => ({
    check,
    title: t.title,
    seconds: (t.durationMs ?? 0) / 1000,
    outcome: t.status,
    message: t.message ?? check.message,
    detail: [t.message ?? check.message, check.hint ?? ""].filter(Boolean).join("\n"),
  }));
  if (check.status !== "pass" && !cases.some((c) => c.outcome === "fail")) {
    cases.push({
      check,
      title: check.title,
      seconds: 0,
      outcome: check.status === "error" ? "error" : "fail",
      message: check.message,
      detail: [check.message, check.hint ?? ""].filter(Boolean).join("\n"),
    });
  }
  return cases;
}

function caseXml(c: Case): string {
  const open = `    <testcase classname="${attr(c.check.id)}" name="${attr(c.title)}" time="${c.seconds.toFixed(3)}"`;
  switch (c.outcome) {
    case "pass":
      return `${open}/>`;
    case "skip":
      return `${open}><skipped/></testcase>`;
    case "fail":
      return `${open}><failure message="${attr(c.message)}" type="${attr(c.check.id)}">${text(c.detail)}</failure></testcase>`;
    case "error":
      return `${open}><error message="${attr(c.message)}" type="${attr(c.check.id)}">${text(c.detail)}</error></testcase>`;
  }
}

// Characters XML 1.0 does not allow anywhere (C0 controls but tab/newline/CR, U+FFFE/U+FFFF,
// unpaired surrogates) are dropped; markup characters are escaped.
export function xmlSafe(value: string): string {
  return value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "");
}

function text(value: string): string {
  return xmlSafe(value).replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!);
}

function attr(value: string): string {
  return text(value).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}
