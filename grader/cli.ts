// npm run grade -- [--lab 33-mcp-lite] [--submission DIR | --solution] [--json FILE]
//                  [--format text|json|markdown|gradescope|exercism|junit|prairielearn] [--out FILE]
//                  [--seed N] [--lang zh|en] [--batch DIR [--workers N] [--gradebook PREFIX] [--student-pattern REGEX]]
//                  [--deadline-ms N] [--hang-ms N] [--keep] [--from RESULT.json]
// --from re-renders a saved native result in another --format without grading again.
// Exit status: 0 pass, 1 fail, 2 could not grade (CONTRACT §2). The --json file is
// written in every case, even when grading itself broke.

import { runCli } from "./cli-main.ts";

process.exitCode = await runCli(process.argv.slice(2));
