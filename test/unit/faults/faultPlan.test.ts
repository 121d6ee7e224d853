import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { atFaultPoint, FaultPlan, InjectedFault, installFaults, planFromEnvironment, type FaultRule } from "../../../runtime/faults/index.ts";

let uninstall: (() => void) | undefined;
afterEach(() => uninstall?.());

function plan(...rules: FaultRule[]): FaultPlan {
  const p = new FaultPlan(rules);
  uninstall = installFaults(p);
  return p;
}

describe("atFaultPoint", () => {
  it("runs the operation untouched when no plan is installed", async () => {
    let ran = 0;
    expect(await atFaultPoint("turn.commit", () => ++ran)).toBe(1);
    expect(ran).toBe(1);
  });

  it("fail: the operation never runs and the caller gets an InjectedFault", async () => {
    const p = plan({ point: "turn.commit", fault: { kind: "fail" } });
    let ran = 0;
    const error = await atFaultPoint("turn.commit", () => ++ran).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InjectedFault);
    expect((error as InjectedFault).message).toMatch(/turn\.commit: failed before it landed/);
    expect(ran).toBe(0);
    expect(p.injected("turn.commit")).toHaveLength(1);
  });

  it("ackLost: the operation lands, then the caller gets an InjectedFault", async () => {
    plan({ point: "history.append", fault: { kind: "ackLost" } });
    let ran = 0;
    await expect(atFaultPoint("history.append", async () => ++ran)).rejects.toThrow(/landed, acknowledgement lost/);
    expect(ran).toBe(1);
  });

  it("applies a rule to the nth matching occurrence, `times` times, and only where the detail matches", async () => {
    const p = plan({ point: "bridge.post", fault: { kind: "fail" }, match: { channel: "C1" }, nth: 2, times: 2 });
    const outcomes: string[] = [];
    for (const channel of ["C1", "C2", "C1", "C1", "C2", "C1", "C1"]) {
      outcomes.push(await atFaultPoint("bridge.post", () => "ok", { channel }).catch(() => "fault"));
    }
    // C1's occurrences: 1st ok, 2nd and 3rd fault, 4th and 5th ok; C2 never matches.
    expect(outcomes).toEqual(["ok", "ok", "fault", "fault", "ok", "ok", "ok"]);
    expect(p.count("bridge.post")).toBe(7);
  });

  it("hold before: the operation waits until the test releases it", async () => {
    const p = plan({ point: "history.claim", fault: { kind: "hold" } });
    const order: string[] = [];
    const call = atFaultPoint("history.claim", () => order.push("claim"), { soulId: "s" });
    const held = await p.reached("history.claim");
    expect(held.detail).toEqual({ soulId: "s" });
    order.push("racing append");
    held.release();
    await call;
    expect(order).toEqual(["racing append", "claim"]);
  });

  it("hold after: the operation landed, its caller hears only once released", async () => {
    const p = plan({ point: "outbox.publish", fault: { kind: "hold", after: true } });
    const order: string[] = [];
    const call = atFaultPoint("outbox.publish", async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push("published");
    }).then(() => order.push("caller heard"));
    const held = await p.reached("outbox.publish");
    // reached() resolves only once the operation landed, not when the point was decided.
    expect(order).toEqual(["published"]);
    order.push("meanwhile");
    held.release();
    await call;
    expect(order).toEqual(["published", "meanwhile", "caller heard"]);
  });

  it("delay: the operation runs late", async () => {
    plan({ point: "lease.renew", fault: { kind: "delay", ms: 50 } });
    const started = performance.now();
    await atFaultPoint("lease.renew", () => undefined);
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
  });

  it("refuses a rule it cannot apply, naming what is wrong", () => {
    expect(() => new FaultPlan([{ point: "nope" as never, fault: { kind: "fail" } }])).toThrow(/unknown point "nope"/);
    expect(() => new FaultPlan([{ point: "tool.call", fault: { kind: "delay" } }])).toThrow(/needs ms/);
    expect(() => planFromEnvironment("{")).toThrow(/ENSOUL_FAULTS is not JSON/);
    expect(planFromEnvironment(undefined)).toBeUndefined();
  });
});

describe("ENSOUL_FAULTS in a child process", () => {
  const script = `
    import { atFaultPoint } from "./runtime/faults/index.ts";
    for (let i = 1; i <= 3; i++) {
      await atFaultPoint("bridge.post", () => process.stdout.write("post " + i + "\\n"));
    }
    process.stdout.write("done\\n");
  `;
  const run = (faults: string) =>
    spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: new URL("../../..", import.meta.url).pathname,
      env: { ...process.env, ENSOUL_FAULTS: faults },
      encoding: "utf8",
    });

  it("kills the process with SIGKILL right after the nth operation landed", () => {
    const child = run(JSON.stringify([{ point: "bridge.post", nth: 2, fault: { kind: "crash", after: true } }]));
    expect(child.signal).toBe("SIGKILL");
    expect(child.stdout).toBe("post 1\npost 2\n");
  });

  it("kills it before the nth operation runs", () => {
    const child = run(JSON.stringify([{ point: "bridge.post", nth: 2, fault: { kind: "crash" } }]));
    expect(child.signal).toBe("SIGKILL");
    expect(child.stdout).toBe("post 1\n");
  });
});
