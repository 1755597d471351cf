// `npm run demo -- <case> [--lang zh|en] [--deadline-ms N] [--json FILE]`: live demos of the
// lesson's failure cases. With no case it lists the cases and what each shows.
// Exit status: 0 when the demo showed what it promised, 1 when it did not, 2 on bad usage.

import { writeFileSync } from "node:fs";
import { DEMOS } from "./cases/index.ts";
import { DEFAULT_DEADLINE_MS, runDemo } from "./demo.ts";
import { parseLang, say, type Lang } from "./i18n.ts";

interface Args {
  name: string | undefined;
  lang: Lang;
  deadlineMs: number;
  json: string | undefined;
}

function parseArgs(argv: string[]): Args | string {
  const args: Args = { name: undefined, lang: "zh", deadlineMs: DEFAULT_DEADLINE_MS, json: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => argv[++i];
    if (arg === "--lang") {
      const lang = parseLang(value());
      if (!lang) return "--lang must be zh or en";
      args.lang = lang;
    } else if (arg === "--deadline-ms") {
      const ms = Number(value());
      if (!Number.isInteger(ms) || ms <= 0) return "--deadline-ms must be a positive integer";
      args.deadlineMs = ms;
    } else if (arg === "--json") {
      args.json = value();
      if (!args.json) return "--json needs a file name";
    } else if (arg.startsWith("-")) {
      return `unknown option ${arg}`;
    } else if (args.name === undefined) {
      args.name = arg;
    } else {
      return `unexpected argument ${arg}`;
    }
  }
  return args;
}

function list(lang: Lang): void {
  console.log(say(lang, { zh: "用法：npm run demo -- <演示> [--lang en]", en: "usage: npm run demo -- <case> [--lang en]" }));
  console.log("");
  for (const demo of DEMOS) {
    console.log(`  ${demo.id.padEnd(8)} ${say(lang, demo.title)}`);
    console.log(`  ${"".padEnd(8)} ${say(lang, demo.shows)}`);
  }
  console.log("");
  console.log(
    say(lang, {
      zh: "每个演示都会启动 fixture 服务端，打印管道上的消息时间线与每个 Promise 的结局，结束时回收所有进程。",
      en: "Each demo starts the fixture server, prints a timeline of the pipe and of every promise's outcome, and reaps every process at the end.",
    }),
  );
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (typeof parsed === "string") {
    console.error(parsed);
    return 2;
  }
  if (parsed.name === undefined) {
    list(parsed.lang);
    return 0;
  }
  const demo = DEMOS.find((d) => d.id === parsed.name);
  if (!demo) {
    console.error(say(parsed.lang, { zh: "没有名为 {name} 的演示。", en: "No demo named {name}." }, { name: parsed.name }));
    list(parsed.lang);
    return 2;
  }
  const startedAt = Date.now();
  const result = await runDemo(demo, { lang: parsed.lang, out: (line) => console.log(line), deadlineMs: parsed.deadlineMs });
  const elapsedMs = Date.now() - startedAt;
  console.log(say(parsed.lang, { zh: "用时 {ms} ms。", en: "Took {ms} ms." }, { ms: elapsedMs }));
  if (parsed.json) writeFileSync(parsed.json, `${JSON.stringify({ demo: demo.id, elapsedMs, ...result }, replacer, 2)}\n`);
  return result.ok ? 0 : 1;
}

// Errors become { code, message } in the JSON file.
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, code: (value as { code?: string }).code, message: value.message };
  return value;
}

process.exitCode = await main();
