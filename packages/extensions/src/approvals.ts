// The approval of a changed server hash (manager.ts): a quarantined server whose
// configuration or binary changed starts again only when the operator's approve() says yes.
// Calls waiting on one change share one question; a "no" (or an approve() that throws) is
// asked again next time, as the operator may approve later; a "yes" is spent.

import type { HashChange } from "./manager-types.ts";

export class Approvals {
  private readonly pending = new Map<string, Promise<boolean>>();

  constructor(private readonly approve: ((change: HashChange) => boolean | Promise<boolean>) | undefined) {}

  // Whether the change is approved; without an approve callback, never.
  ask(change: HashChange): Promise<boolean> {
    const key = `${change.server}\n${change.hash}`;
    let decision = this.pending.get(key);
    if (!decision) {
      const approve = this.approve;
      decision = approve ? Promise.resolve().then(() => approve(change)).then((yes) => yes === true, () => false) : Promise.resolve(false);
      this.pending.set(key, decision);
      void decision.then(() => this.pending.delete(key));
    }
    return decision;
  }
}
