// Every demo case, in the order an instructor usually shows them.
import type { DemoCase } from "../demo.ts";
import { swap } from "./swap.ts";

export const DEMOS: readonly DemoCase[] = [swap];
