// npm run grade -- …: the grade command line (its flags and exit status: USAGE and runCli in
// cli-main.ts, CONTRACT §2).

import { runCli } from "./cli-main.ts";

process.exitCode = await runCli(process.argv.slice(2));
