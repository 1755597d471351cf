// missedExpectations (grader/corpus.ts): how the corpus tests and `corpus:stress` judge a grade
// of a corpus entry against its expected.json. Each expectation, met and then broken by one
// change to a result, so none of them is a check that cannot fail.

import { describe, expect, it } from "vitest";
import { missedExpectations, type CorpusEntry, type CorpusExpectation } from "../../grader/corpus.ts";
import type { CheckResult, GradeResult } from "../../grader/result-types.ts";

const IDS = ["evidence/timeout", "rubric/lifecycle", "homework/cancel-notice"];

function check(id: string, status: CheckResult["status"], tests: CheckResult["tests"] = []): CheckResult {
  const kind = id.startsWith("homework/") ? "homework" : id.startsWith("evidence/") ? "evidence" : "rubric";
  return { id, kind, status, score: 0, maxScore: 1, message: `${id} said ${status}`, title: id, standard: "", deduction: "", tests } as CheckResult;
}

function result(status: GradeResult["status"], checks: CheckResult[], extra: Partial<GradeResult> = {}): GradeResult {
  return {
    version: 1, lab: "33-mcp-lite", status, score: status === "error" ? 0 : 90, maxScore: 100, bonus: { score: 0, maxScore: 0 },
    seed: 3, lang: "en", submission: "/tmp/x", startedAt: "", durationMs: 1, checks, ...extra,
  };
}

function entry(expected: Partial<CorpusExpectation>, mutations = false): CorpusEntry {
  return {
    name: "e", dir: "/tmp/e",
    expected: { defect: "d", status: "fail", mustFail: [], mustPass: [], ...expected },
    mutations: mutations ? [{ file: "src/a.ts", find: "a", replace: "b" }] : undefined,
  };
}

const failing = (id: string, message: string) => check(id, "fail", [{ title: "t", status: "fail", message }]);

describe("missedExpectations", () => {
  it("is empty for a grade that meets every expectation", () => {
    const e = entry({ mustFail: ["evidence/timeout"], mustPass: ["rubric/lifecycle"], checkMessageIncludes: { "evidence/timeout": "said" } }, true);
    const r = result("fail", [failing("evidence/timeout", "late"), check("rubric/lifecycle", "pass"), check("homework/cancel-notice", "fail")]);
    expect(missedExpectations(e, r, "auto", IDS)).toEqual([]);
  });

  it("names a wrong status, with why each check did not pass; --sandbox off reads statusSandboxOff", () => {
    const r = result("pass", [check("evidence/timeout", "pass"), check("rubric/lifecycle", "pass"), check("homework/cancel-notice", "pass")]);
    expect(missedExpectations(entry({}), r, "auto", IDS)).toEqual(["status pass, expected fail"]);
    const failed = result("fail", [failing("evidence/timeout", "late"), check("rubric/lifecycle", "pass"), check("homework/cancel-notice", "pass")]);
    const [miss] = missedExpectations(entry({ status: "error" }), failed, "auto", IDS);
    expect(miss).toBe("status fail, expected error; evidence/timeout fail: evidence/timeout said fail | t: late");
    expect(missedExpectations(entry({ status: "error", statusSandboxOff: "fail" }), failed, "off", IDS)).toEqual([]);
  });

  it("names a check that passed but must fail, and one that must pass but did not or is missing", () => {
    const r = result("fail", [check("evidence/timeout", "pass"), failing("rubric/lifecycle", "x"), check("homework/cancel-notice", "pass")]);
    expect(missedExpectations(entry({ mustFail: ["evidence/timeout"], mustPass: ["rubric/lifecycle", "rubric/gone"] }), r, "auto", IDS)).toEqual([
      "evidence/timeout passed; it must not",
      "rubric/lifecycle fail; it must pass",
      "rubric/gone missing; it must pass",
    ]);
  });

  it("checks the message's text, the whole result's, and a check's", () => {
    const r = result("error", [check("evidence/timeout", "error"), check("rubric/lifecycle", "error"), check("homework/cancel-notice", "error")], { message: "Directory import '/g/submission/b/x'" });
    const e = entry({ status: "error", messageIncludes: ["Directory import", "submission/b/"], messageExcludes: ["hunter2"] });
    expect(missedExpectations(e, r, "auto", IDS)).toEqual([]);
    expect(missedExpectations(entry({ status: "error", messageIncludes: ["b/client-errors"] }), r, "auto", IDS)).toEqual([
      `the message lacks "b/client-errors": "Directory import '/g/submission/b/x'"`,
    ]);
    expect(missedExpectations(entry({ status: "error", messageExcludes: ["submission/b"] }), r, "auto", IDS)).toEqual(['the result contains "submission/b"']);
    expect(missedExpectations(entry({ status: "error", checkMessageIncludes: { "rubric/lifecycle": "ran out of memory" } }), r, "auto", IDS)).toEqual([
      `rubric/lifecycle's message lacks "ran out of memory": "rubric/lifecycle said error"`,
    ]);
  });

  it("wants every check of the lab listed and an error to score nothing", () => {
    const r = result("error", [check("evidence/timeout", "error")], { score: 5 });
    expect(missedExpectations(entry({ status: "error" }), r, "auto", IDS)).toEqual([
      "rubric/lifecycle is not in the result",
      "homework/cancel-notice is not in the result",
      "status error with score 5",
    ]);
  });

  it("charges a mutation's single defect to its own checks: another may fail only with tests that need another TODO first", () => {
    const needs = failing("rubric/lifecycle", "needs TODO(timeout) first: late");
    const ok = result("fail", [failing("evidence/timeout", "late"), needs, check("homework/cancel-notice", "fail")]);
    expect(missedExpectations(entry({ mustFail: ["evidence/timeout"] }, true), ok, "auto", IDS)).toEqual([]);
    const blamed = result("fail", [failing("evidence/timeout", "late"), failing("rubric/lifecycle", "leaked a timer"), check("homework/cancel-notice", "fail")]);
    expect(missedExpectations(entry({ mustFail: ["evidence/timeout"] }, true), blamed, "auto", IDS)).toEqual([
      "rubric/lifecycle fail, though this single-defect entry must not fail it: t: leaked a timer",
    ]);
    // The miss names the test that failed on its own, however long the others' messages are.
    const long = check("rubric/handshake", "fail", [
      { title: "needs one", status: "fail", message: `needs TODO(timeout) first: ${"x".repeat(5_000)}` },
      { title: "own", status: "fail", message: `got ${"y".repeat(1_000)}` },
    ]);
    const [miss] = missedExpectations(entry({ mustFail: ["evidence/timeout"] }, true), result("fail", [failing("evidence/timeout", "late"), check("rubric/lifecycle", "pass"), long, check("homework/cancel-notice", "fail")]), "auto", IDS);
    expect(miss).toMatch(/^rubric\/handshake fail, though this single-defect entry must not fail it: own: got y+…$/);
    expect(miss).not.toContain("needs one");
    expect(miss!.length).toBeLessThan(600);
    // A hand-written client (no mutations) may fail other checks, unless it asks not to.
    expect(missedExpectations(entry({ mustFail: ["evidence/timeout"] }), blamed, "auto", IDS)).toEqual([]);
    expect(missedExpectations(entry({ mustFail: ["evidence/timeout"], mustPassOthers: true }), blamed, "auto", IDS)).toHaveLength(1);
    const errored = result("fail", [failing("evidence/timeout", "late"), check("rubric/lifecycle", "error"), check("homework/cancel-notice", "fail")]);
    expect(missedExpectations(entry({ mustFail: ["evidence/timeout"] }, true), errored, "auto", IDS)).toHaveLength(1);
  });
});
