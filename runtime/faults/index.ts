/**
 * Fault injection at the I/O boundaries of the exactly-once paths (docs/GUARANTEES.md). The
 * code names each boundary with `atFaultPoint`; a test installs a FaultPlan (or a child process
 * gets one in `ENSOUL_FAULTS`) to fail, lose the acknowledgement of, delay, hold or crash at it.
 * Like the log, it is the bottom of the kernel and imports nothing of ensoul.
 */
export { atFaultPoint, installFaults } from "./atFaultPoint.ts";
export { FaultPlan, planFromEnvironment, type FaultInjector, type FaultOccurrence, type FaultRule, type HeldOperation, type Injection } from "./faultPlan.ts";
export { FAULT_POINTS, InjectedFault, isFaultPoint, type Fault, type FaultDetail, type FaultKind, type FaultPoint } from "./faultPoints.ts";
