// The order a grade starts its test files in: vitest's own (failed, then longest, then
// largest first, from its cache), except that the lab's known long files (the manifest's
// `runFirst`, passed as LAB_RUN_FIRST) start before all others. A long file that starts
// last runs alone at the end while the other workers sit idle; started first, it overlaps
// with the rest. Only the order changes: every file runs, each on its own.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Moves the specs whose file ends with one of `first` to the front, in `first`'s order; the rest keep theirs. */
export function runFirstOrder<T extends { moduleId: string }>(specs: T[], first: string[]): T[] {
  const rank = (spec: T) => {
    const at = first.findIndex((file) => file !== "" && spec.moduleId.replaceAll("\\", "/").endsWith(`/${file}`));
    return at === -1 ? first.length : at;
  };
  return specs.map((spec, index) => ({ spec, index, rank: rank(spec) })).sort((a, b) => a.rank - b.rank || a.index - b.index).map((entry) => entry.spec);
}

export class RunFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const first = (process.env.LAB_RUN_FIRST ?? "").split(",").filter(Boolean);
    return runFirstOrder(await super.sort(files), first);
  }
}
