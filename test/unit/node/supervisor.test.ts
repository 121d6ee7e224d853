/**
 * The supervisor's backoff and bookkeeping: each failure in a row doubles the wait before the
 * restart (up to the cap), a quiet spell starts the count again, a failure during a restart is
 * counted but restarts nothing twice, a failed restart is a failure, and a stopped supervisor
 * restarts nothing. The clock is injected; the waits are real but a few milliseconds.
 */
import { expect, it } from "vitest";
import { currentActor } from "../../../runtime/node/actorScope.ts";
import { Supervisor } from "../../../runtime/node/Supervisor.ts";

function rig() {
  let now = 0;
  const events: { type: string; data: Record<string, unknown> }[] = [];
  const reported: string[] = [];
  const supervisor = new Supervisor({
    event: (_actor, type, data) => events.push({ type, data }),
    report: (_err, what) => reported.push(what),
    backoff: { firstMs: 1, maxMs: 4, stableMs: 1_000 },
    now: () => now,
  });
  return { supervisor, events, reported, advance: (ms: number) => (now += ms) };
}

const settle = () => new Promise((r) => setTimeout(r, 30));

it("restarts with a backoff that doubles for failures in a row, up to the cap, and starts again after a quiet spell", async () => {
  const { supervisor, events, advance } = rig();
  let restarts = 0;
  const actor = supervisor.actor("soul sam", "sam", async (delay) => {
    await delay;
    restarts++;
  });
  for (let i = 0; i < 5; i++) {
    actor.failed(new Error(`failure ${i}`), "uncaught exception");
    await settle();
    advance(10);
  }
  expect(events.filter((e) => e.type === "failed").map((e) => e.data["restartInMs"])).toEqual([1, 2, 4, 4, 4]);
  expect(restarts).toBe(5);
  advance(2_000);
  actor.failed(new Error("after a quiet spell"), "its machine failed");
  await settle();
  expect(events.at(-2)).toEqual({ type: "failed", data: { actor: "soul sam", error: "after a quiet spell", how: "its machine failed", failures: 1, restartInMs: 1 } });
  expect(events.at(-1)).toEqual({ type: "restarted", data: { actor: "soul sam", failures: 1 } });
});

it("runs the restart as the actor's work, counts a failure during a restart without restarting twice, and treats a failed restart as a failure", async () => {
  const { supervisor, events } = rig();
  let attempts = 0;
  let scopeDuringRestart: string | undefined;
  const actor = supervisor.actor("soul ada", "ada", async (delay) => {
    attempts++;
    scopeDuringRestart = currentActor()?.name;
    await delay;
    if (attempts === 1) throw new Error("could not reopen");
  });
  actor.failed(new Error("first"), "uncaught exception");
  actor.failed(new Error("while restarting"), "uncaught exception");
  await settle();
  expect(scopeDuringRestart).toBe("soul ada");
  expect(attempts).toBe(2);
  expect(events.map((e) => [e.type, e.data["how"] ?? "", e.data["failures"]])).toEqual([
    ["failed", "uncaught exception", 1],
    ["failed", "its restart failed", 3],
    ["restarted", "", 3],
  ]);
});

it("restarts nothing once stopped; a failure is then only reported", async () => {
  const { supervisor, events, reported } = rig();
  let restarts = 0;
  const actor = supervisor.actor("soul sam", "sam", async () => void restarts++);
  supervisor.stop();
  actor.failed(new Error("late"), "uncaught exception");
  await settle();
  expect(restarts).toBe(0);
  expect(events).toEqual([]);
  expect(reported).toEqual(["soul sam failed (uncaught exception)"]);
});
