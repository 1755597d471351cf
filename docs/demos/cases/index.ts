// Every demo case, in the order an instructor usually shows them.
import type { DemoCase } from "../demo.ts";
import { crash } from "./crash.ts";
import { leak } from "./leak.ts";
import { orphan } from "./orphan.ts";
import { swap } from "./swap.ts";

export const DEMOS: readonly DemoCase[] = [swap, leak, crash, orphan];
