import { planFromEnvironment, type FaultInjector } from "./faultPlan.ts";
import { InjectedFault, type FaultDetail, type FaultPoint } from "./faultPoints.ts";

/** None in production: every point is then one comparison and the operation itself. */
let injector: FaultInjector | undefined = planFromEnvironment(process.env.ENSOUL_FAULTS);

/** Makes `plan` decide every point of this process until the returned function is called. */
export function installFaults(plan: FaultInjector): () => void {
  injector = plan;
  return () => {
    if (injector === plan) injector = undefined;
  };
}

const NO_DETAIL: FaultDetail = Object.freeze({});

/**
 * Runs `operation`, one occurrence of `point`, with the fault the installed plan has for it:
 * not run (`fail`), run with its result lost (`ackLost`), run late (`delay`), held for a race
 * (`hold`), or the process killed before or after it (`crash`). With no plan, just runs it.
 */
export async function atFaultPoint<T>(point: FaultPoint, operation: () => Promise<T> | T, detail: FaultDetail = NO_DETAIL): Promise<T> {
  const injection = injector?.decide(point, detail);
  if (!injection) return operation();
  const { fault, hold } = injection;
  const after = fault.after === true;
  if (!after) {
    if (fault.kind === "fail") throw new InjectedFault(point, "fail");
    if (fault.kind === "crash") crash();
    if (fault.kind === "delay") await new Promise((resolve) => setTimeout(resolve, fault.ms ?? 0));
    if (hold) await hold();
  }
  const result = await operation();
  if (fault.kind === "ackLost") throw new InjectedFault(point, "ackLost");
  if (after && fault.kind === "crash") crash();
  if (after && hold) await hold();
  return result;
}

/** SIGKILL, not exit: no handler, no flush, no finally runs, as when a machine loses power. */
function crash(): never {
  process.kill(process.pid, "SIGKILL");
  // The signal is delivered asynchronously on some platforms: nothing after the point may run.
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_000);
}
