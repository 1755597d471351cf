// What the lesson 13 evidence files share: the runner under test ("#process-boundary" points
// at the starter, the solution or a learner's folder) and the node binary the program runs on.

export { ProcessError, runProcess } from "#process-boundary/src/run-process.ts";

export const NODE = process.execPath;
