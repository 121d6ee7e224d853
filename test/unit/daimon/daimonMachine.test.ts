import { createActor, waitFor } from "xstate";
import { describe, expect, it } from "vitest";
import {
  createDaimonMachine,
  daimonPhase,
  type DaimonDelivery,
  type DaimonImplementations,
  type DaimonMachineInput,
  type DaimonPhase,
  type DivinationRequest,
} from "../../../actors/daimon/index.ts";

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A daimon machine whose divinations and deliveries the test answers by hand. */
function harness(input: Partial<DaimonMachineInput> = {}, impl: Partial<DaimonImplementations> = {}) {
  const divinations: { request: DivinationRequest; answer: Deferred<string | null> }[] = [];
  const deliveries: { delivery: DaimonDelivery; done: Deferred<void> }[] = [];
  const errors: { error: unknown; phase: string }[] = [];
  const listening = { starts: 0, stops: 0 };
  const machine = createDaimonMachine({
    divine: (request) => {
      const answer = deferred<string | null>();
      divinations.push({ request, answer });
      return answer.promise;
    },
    deliver: (delivery) => {
      const done = deferred<void>();
      deliveries.push({ delivery, done });
      return done.promise;
    },
    observe: () => {
      listening.starts++;
      return () => void listening.stops++;
    },
    onError: (error, phase) => void errors.push({ error, phase }),
    ...impl,
  });
  const actor = createActor(machine, { input: { soulName: "Ann", daimonName: "Kothar", mode: "whisper", everyN: 1, ...input } });
  const phases: DaimonPhase[] = [];
  actor.subscribe((s) => {
    const p = daimonPhase(s);
    if (phases.at(-1) !== p) phases.push(p);
  });
  actor.start();
  const phase = () => daimonPhase(actor.getSnapshot());
  const until = (p: DaimonPhase) => waitFor(actor, (s) => daimonPhase(s) === p, { timeout: 2000 });
  const exchange = (said: string, answer: string, id?: string) => {
    actor.send({ type: "OBSERVE_PERCEPTION", name: "Bob", content: said, ...(id ? { id, meta: { channel: "c1" } } : {}) });
    actor.send({ type: "OBSERVE_SPEECH", content: answer });
  };
  return { actor, divinations, deliveries, errors, listening, phases, phase, until, exchange };
}

describe("daimon machine", () => {
  it("goes watching -> divining -> whispering -> watching, every N exchanges", async () => {
    const h = harness({ everyN: 2 });
    expect(h.phase()).toBe("watching");
    h.exchange("I keep asking the same thing", "I know.");
    expect(h.phase()).toBe("watching");
    expect(h.divinations).toHaveLength(0);
    h.exchange("Is it really going to be fine?", "Yes.", "perc-2");
    expect(h.phase()).toBe("divining");
    expect(h.divinations).toHaveLength(1);
    const { request } = h.divinations[0];
    expect(request.transcript.map((l) => `${l.role}:${l.speaker}:${l.text}`)).toEqual([
      "other:Bob:I keep asking the same thing",
      "soul:Ann:I know.",
      "other:Bob:Is it really going to be fine?",
      "soul:Ann:Yes.",
    ]);
    expect(request.interactionCount).toBe(2);
    expect(request.signal.aborted).toBe(false);

    h.divinations[0].answer.resolve("<b>They need</b> assurance,\n\n not answers.");
    await h.until("whispering");
    expect(h.deliveries).toHaveLength(1);
    expect(h.deliveries[0].delivery).toEqual({
      intuition: "They need assurance, not answers.",
      mode: "whisper",
      soulName: "Ann",
      daimonName: "Kothar",
      replyTo: { id: "perc-2", meta: { channel: "c1" } },
    });
    h.deliveries[0].done.resolve();
    await h.until("watching");
    expect(h.phases).toEqual(["watching", "divining", "whispering", "watching"]);
    const ctx = h.actor.getSnapshot().context;
    expect(ctx.deliveries).toBe(1);
    expect(ctx.exchanges).toBe(0);
    expect(ctx.lastDelivery?.intuition).toBe("They need assurance, not answers.");
    h.actor.stop();
  });

  it("keeps watching when the divination has nothing to say, or fails, and divines again later", async () => {
    const h = harness();
    h.exchange("a", "b");
    h.divinations[0].answer.resolve("  <x></x> ");
    await h.until("watching");
    expect(h.deliveries).toHaveLength(0);

    h.exchange("c", "d");
    h.divinations[1].answer.reject(new Error("model down"));
    await h.until("watching");
    expect(h.errors).toEqual([{ error: new Error("model down"), phase: "divining" }]);
    expect(h.actor.getSnapshot().context.lastError).toBe("divining: model down");

    h.exchange("e", "f");
    h.divinations[2].answer.resolve("now");
    await h.until("whispering");
    h.deliveries[0].done.reject(new Error("bus closed"));
    await h.until("watching");
    expect(h.errors.at(-1)).toEqual({ error: new Error("bus closed"), phase: "whispering" });
    expect(h.actor.getSnapshot().context.deliveries).toBe(0);
    h.actor.stop();
  });

  it("counts only answers to someone: the soul answering the daimon does not trigger a divination", () => {
    const h = harness({ everyN: 1 });
    h.actor.send({ type: "OBSERVE_SPEECH", content: "Thank you, Kothar." });
    h.actor.send({ type: "OBSERVE_SPEECH", content: "And another thing." });
    expect(h.phase()).toBe("watching");
    expect(h.actor.getSnapshot().context.interactionCount).toBe(0);
    expect(h.actor.getSnapshot().context.transcript).toHaveLength(2);
    h.actor.stop();
  });

  it("keeps a bounded transcript", () => {
    const h = harness({ everyN: 1000, maxLines: 4 });
    for (let i = 0; i < 10; i++) h.exchange(`q${i}`, `a${i}`);
    expect(h.actor.getSnapshot().context.transcript.map((l) => l.text)).toEqual(["q8", "a8", "q9", "a9"]);
    h.actor.stop();
  });

  it("records what the daimon said aloud in speak mode, but not a whisper", async () => {
    const h = harness({ mode: "speak" });
    h.exchange("hello", "hi");
    h.divinations[0].answer.resolve("Ask what they fear.");
    await h.until("whispering");
    expect(h.deliveries[0].delivery.mode).toBe("speak");
    h.deliveries[0].done.resolve();
    await h.until("watching");
    expect(h.actor.getSnapshot().context.transcript.at(-1)).toEqual({ speaker: "Kothar", role: "daimon", text: "Ask what they fear." });
    h.actor.stop();
  });

  it("switching off mid-divination aborts it, stops listening, forgets, and ignores what it hears; on again resumes", async () => {
    const h = harness();
    expect(h.listening).toEqual({ starts: 1, stops: 0 });
    h.exchange("a", "b");
    expect(h.phase()).toBe("divining");
    const { request, answer } = h.divinations[0];
    h.actor.send({ type: "SET_MODE", mode: "off" });
    expect(h.phase()).toBe("off");
    expect(request.signal.aborted).toBe(true);
    expect(h.listening).toEqual({ starts: 1, stops: 1 });
    answer.resolve("too late");
    await new Promise((r) => setTimeout(r, 10));
    expect(h.phase()).toBe("off");
    expect(h.deliveries).toHaveLength(0);
    h.exchange("c", "d");
    expect(h.actor.getSnapshot().context.transcript).toEqual([]);
    expect(h.divinations).toHaveLength(1);

    h.actor.send({ type: "SET_MODE", mode: "both" });
    expect(h.phase()).toBe("watching");
    expect(h.listening).toEqual({ starts: 2, stops: 1 });
    h.exchange("e", "f");
    h.divinations[1].answer.resolve("x");
    await h.until("whispering");
    expect(h.deliveries[0].delivery.mode).toBe("both");
    h.actor.stop();
  });

  it("a mode switch during whispering does not change the delivery in flight, only the next one", async () => {
    const h = harness();
    h.exchange("a", "b");
    h.divinations[0].answer.resolve("first");
    await h.until("whispering");
    h.actor.send({ type: "SET_MODE", mode: "speak" });
    h.deliveries[0].done.resolve();
    await h.until("watching");
    expect(h.actor.getSnapshot().context.lastDelivery?.mode).toBe("whisper");
    h.exchange("c", "d");
    h.divinations[1].answer.resolve("second");
    await h.until("whispering");
    expect(h.deliveries[1].delivery.mode).toBe("speak");
    h.actor.stop();
  });

  it("starting off holds no subscription and divines nothing", () => {
    const h = harness({ mode: "off" });
    expect(h.phase()).toBe("off");
    h.exchange("a", "b");
    expect(h.listening.starts).toBe(0);
    expect(h.divinations).toHaveLength(0);
    h.actor.stop();
  });

  it("lets a shouldDivine hook decide instead of every N, and survives a hook that throws", () => {
    let explode = false;
    const h = harness(
      { everyN: 1000 },
      {
        shouldDivine: (transcript) => {
          if (explode) throw new Error("hook broke");
          return transcript.at(-1)?.text.includes("?") === true;
        },
      },
    );
    h.actor.send({ type: "OBSERVE_PERCEPTION", name: "Bob", content: "statement" });
    expect(h.phase()).toBe("watching");
    h.actor.send({ type: "OBSERVE_PERCEPTION", name: "Bob", content: "a question?" });
    expect(h.phase()).toBe("divining");
    h.actor.send({ type: "SET_MODE", mode: "off" });
    h.actor.send({ type: "SET_MODE", mode: "whisper" });
    explode = true;
    h.actor.send({ type: "OBSERVE_PERCEPTION", name: "Bob", content: "another?" });
    expect(h.phase()).toBe("watching");
    expect(h.errors.map((e) => e.phase)).toEqual(["shouldDivine"]);
    h.actor.stop();
  });

  it("STOP ends the machine and stops listening", () => {
    const h = harness();
    h.actor.send({ type: "STOP" });
    expect(h.actor.getSnapshot().status).toBe("done");
    expect(h.phase()).toBe("stopped");
    expect(h.listening.stops).toBe(1);
  });
});
