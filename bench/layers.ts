// Paired full grades of the solution in several checkouts of this project, round by round, the
// order rotated each round so a slow minute of a noisy machine falls on every checkout alike.
// Prints each round's ratios to the first checkout named and the medians of those ratios.
// Used to split a grade's cost between changes (for example: a tree, the same tree without a
// set of probe files, and the tree before an issue), which `npm run bench` cannot do alone.
//
//   npx tsx bench/layers.ts --rounds 5 /path/to/base /path/to/tree-a /path/to/tree-b
//
// Every checkout needs its own node_modules (npm ci there). Grades run one at a time.

import { timeGrade, type GradeSample } from "./grader-timing.ts";
import { median } from "./stats.ts";

function parse(argv: string[]): { rounds: number; roots: string[] } {
  let rounds = 5;
  const roots: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--rounds") {
      rounds = Number(argv[++i]);
      if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds takes a positive whole number");
    } else roots.push(argv[i]!);
  }
  if (roots.length < 2) throw new Error("name at least two checkouts: the first is the one the others are divided by");
  return { rounds, roots };
}

const { rounds, roots } = parse(process.argv.slice(2));
const samples = roots.map(() => [] as GradeSample[]);
for (let round = 0; round < rounds; round++) {
  const order = roots.map((_, i) => (i + round) % roots.length);
  for (const i of order) {
    const sample = await timeGrade(roots[i]!, "solution");
    if (sample.status !== "pass") throw new Error(`${roots[i]}: the solution graded ${sample.status} (exit ${sample.exitCode}); timings of a broken grade mean nothing`);
    samples[i]!.push(sample);
  }
  const line = roots.map((root, i) => `${root} ${(samples[i]![round]!.ms / 1000).toFixed(2)} s / ${((samples[i]![round]!.cpuMs ?? NaN) / 1000).toFixed(2)} s CPU`);
  console.log(`round ${round + 1}: ${line.join(" | ")}`);
}
console.log(`\nmedians of the per-round ratios to ${roots[0]} (wall, CPU), ${rounds} rounds:`);
for (let i = 1; i < roots.length; i++) {
  const wall = median(samples[i]!.map((s, r) => s.ms / samples[0]![r]!.ms));
  const cpu = median(samples[i]!.map((s, r) => (s.cpuMs ?? NaN) / (samples[0]![r]!.cpuMs ?? NaN)));
  console.log(`${roots[i]}: ${wall.toFixed(2)}x wall, ${cpu.toFixed(2)}x CPU (medians: ${(median(samples[i]!.map((s) => s.ms)) / 1000).toFixed(2)} s, ${(median(samples[i]!.map((s) => s.cpuMs ?? NaN)) / 1000).toFixed(2)} s CPU)`);
}
console.log(`${roots[0]}: medians ${(median(samples[0]!.map((s) => s.ms)) / 1000).toFixed(2)} s, ${(median(samples[0]!.map((s) => s.cpuMs ?? NaN)) / 1000).toFixed(2)} s CPU`);
