// npm run grade -- …: the grade command line (its flags and exit status: USAGE and runCli in
// cli-main.ts, CONTRACT §2).

import { runCli } from "./cli-main.ts";

// A reader that stops early (`npm run grade | head`) closes the pipe: nothing more to say to it.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}

process.exitCode = await runCli(process.argv.slice(2));
