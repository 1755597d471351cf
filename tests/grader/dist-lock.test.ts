// The learner repository's lock file carries only what the learner repository installs: no
// mutation testing (StrykerJS and what only it pulls in), no workbook-only tool; every
// dependency its package.json names is still locked (dist-student.test.ts installs it offline).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, studentLock, studentPackage } from "../../scripts/dist.ts";

const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const pkg = studentPackage(root);
const lock = studentLock(JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")), pkg) as { packages: Record<string, unknown> };
const locked = Object.keys(lock.packages).filter((path) => path !== "");

describe("the learner repository's lock file", () => {
  it("leaves out StrykerJS and the packages only it needs", () => {
    expect(Object.keys(pkg.devDependencies ?? {}).filter((name) => name.startsWith("@stryker-mutator/"))).toEqual([]);
    expect(locked.filter((path) => /node_modules\/@stryker-mutator\//.test(path))).toEqual([]);
    // Packages of the workbook's lock that only StrykerJS pulls in (its CLI's prompts, its report schema).
    const workbook = Object.keys(JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")).packages);
    for (const only of ["node_modules/@inquirer/prompts", "node_modules/mutation-testing-report-schema"]) {
      expect(workbook).toContain(only);
      expect(locked).not.toContain(only);
    }
  });

  it("still locks every dependency the learner's package.json names", () => {
    for (const name of [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]) expect(locked).toContain(`node_modules/${name}`);
  });
});
