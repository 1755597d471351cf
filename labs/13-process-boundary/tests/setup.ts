// Setup for every lesson 13 test file: count the timers the runner under test creates.
import { installTimerTracker } from "./support.ts";

installTimerTracker();
