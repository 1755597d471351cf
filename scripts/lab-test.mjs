// `node scripts/lab-test.mjs <starter|solution|DIR> [...]`: the same as `npm run lab:starter`
// (scripts/lab-test.ts), for callers that start node directly.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./lab-test.ts");
process.exitCode = await main(process.argv.slice(2));
