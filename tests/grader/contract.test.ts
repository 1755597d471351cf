// Every rule of the client contract (CONTRACT.md §1, copied verbatim in
// labs/33-mcp-lite/contract-1.md) is graded by some check: each sentence of its behaviour
// bullets, each error code and each option is named by a rule of lab.ts's CONTRACT_RULES,
// and every test a rule names exists, in a file that backs that rule's check.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTRACT_RULES, lab } from "../../labs/33-mcp-lite/lab.ts";

const labDir = join(import.meta.dirname, "..", "..", "labs", "33-mcp-lite");
const copy = readFileSync(join(labDir, "contract-1.md"), "utf8");
const text = copy.split("\n").filter((line) => !line.startsWith("<!--")).join("\n");
const flat = (s: string) => s.replace(/\s+/g, " ").trim();

/** The behaviour sentences, error codes and option names of §1: what must be graded. */
export function contractItems(section: string): string[] {
  const items: string[] = [];
  const behaviour = section.slice(section.indexOf("Behaviour every submission is graded on"));
  for (const bullet of behaviour.split(/\n- /).slice(1)) {
    for (const sentence of flat(bullet).split(/(?<=\.) (?=[A-Z`])/)) items.push(sentence);
  }
  for (const [, code] of section.matchAll(/\| "([A-Z_]+)"/g)) items.push(code!);
  const options = section.slice(section.indexOf("interface McpClientOptions"), section.indexOf("interface CallOptions"));
  for (const [, name] of options.matchAll(/^\s+(\w+)\??:/gm)) items.push(name!);
  const ctor = /constructor\(options: McpClientOptions\);\s*\/\/ (.*)/.exec(section);
  if (ctor) items.push(ctor[1]!.trim());
  return items;
}

describe("contract coverage", () => {
  const items = contractItems(text);

  it("reads 15 behaviour sentences, 10 error codes, 9 options and the constructor from §1", () => {
    expect(items.filter((i) => /^[A-Z_]+$/.test(i))).toHaveLength(10);
    expect(items.length).toBe(15 + 10 + 9 + 1);
  });

  it("names a rule for every sentence, error code and option of §1, and quotes §1 exactly", () => {
    const uncovered = items.filter((item) => !CONTRACT_RULES.some((rule) => (/^\w+$/.test(item) ? rule.quote === item : item.includes(rule.quote))));
    expect(uncovered, "rules of CONTRACT.md §1 no check grades").toEqual([]);
    const notQuoted = CONTRACT_RULES.filter((rule) => !flat(text).includes(rule.quote)).map((r) => r.id);
    expect(notQuoted, "rules whose quote is not in contract-1.md").toEqual([]);
  });

  it("backs every rule with tests that exist in a file of the rule's check", () => {
    const checks = new Set([...lab.checks.map((c) => c.id), "homework/bounded-stderr"]);
    const files = [...lab.evidenceFiles, ...lab.probeFiles, "homework/bounded-stderr.test.ts"].map((file) => readFileSync(join(labDir, file), "utf8"));
    const missing: string[] = [];
    for (const rule of CONTRACT_RULES) {
      if (rule.tests.length === 0) missing.push(`${rule.id}: no test`);
      for (const { check, test } of rule.tests) {
        if (!checks.has(check)) missing.push(`${rule.id}: unknown check ${check}`);
        const found = files.some((source) => source.includes(`describe("${check}"`) && source.includes(test));
        if (!found) missing.push(`${rule.id}: ${check} has no test "${test}"`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("is a verbatim copy of CONTRACT.md §1 where the lead's file is at hand", () => {
    const lead = "/work/shared/CONTRACT.md";
    if (!existsSync(lead)) return; // CI's clean clone has only the copy
    const source = readFileSync(lead, "utf8");
    const section = source.slice(source.indexOf("## 1."), source.indexOf("## 2."));
    expect(flat(text)).toBe(flat(section));
  });
});
