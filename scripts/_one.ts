import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { listCorpus, materialize } from "/work/main/grader/corpus.ts";
import { grade, loadManifest } from "/work/main/grader/grade.ts";
const name = process.argv[2]!;
const rounds = Number(process.argv[3] ?? 1);
const { manifest, labDir } = await loadManifest("33-mcp-lite");
const entry = listCorpus(labDir).find((e) => e.name === name)!;
const one = async (i: number) => {
  const dir = materialize(entry, join(labDir, manifest.solution), mkdtempSync(join(tmpdir(), "one-")));
  const r = await grade({ submission: dir, seed: 3, lang: "en" });
  const lines: string[] = [`#${i} ${r.status} ${r.score}`];
  for (const c of r.checks) if (c.status !== "pass" && !["evidence/timeout", "rubric/id-matching", "homework/stress-100"].includes(c.id)) for (const t of c.tests) if (t.status !== "pass" && !/^needs TODO/.test(t.message ?? "")) lines.push(`   ${c.id} - ${t.title} :: ${(t.message ?? "").slice(0, 1500)}`);
  console.log(lines.join("\n"));
};
for (let i = 0; i < rounds; i++) await Promise.all([one(2 * i), one(2 * i + 1)]);
