// Setup for every lab test file: start counting the timers the client under test creates.
import { installTimerTracker } from "./support.ts";

installTimerTracker();
