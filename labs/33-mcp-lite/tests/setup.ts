// Setup for every lab test file, before any test file loads the submission: count the
// timers and abort listeners the client under test creates, and record the processes it
// starts (what runs, not which option was passed).
import "../probes/spawn-recorder.ts";
import { installTimerTracker } from "./support.ts";

installTimerTracker();
// In a grade the client lives in a host process (../host/): start it now, while vitest still
// collects the file, rather than when the first test makes a client.
if (process.env.LAB_CLIENT_HOST === "1") (await import("../host/channel.ts")).hostChannel();
