// Setup for every lab test file, before any test file loads the submission: count the
// timers and abort listeners the client under test creates, and record the processes it
// starts (what runs, not which option was passed).
import "../probes/spawn-recorder.ts";
import { installTimerTracker } from "./support.ts";

installTimerTracker();
