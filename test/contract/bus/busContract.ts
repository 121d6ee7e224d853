/**
 * The Bus contract: one suite, run against every implementation (inProcessBus.test.ts,
 * natsBus.test.ts). Whatever an actor may rely on is asserted here, so switching from the
 * embedded bus to NATS cannot change behaviour.
 */
import { afterEach, expect, it } from "vitest";
import {
  acceptEnvelopes,
  BusClosedError,
  BusTimeoutError,
  clusterSubjects,
  decodeDeadLetter,
  encodeEnvelope,
  InvalidSubjectError,
  makeEnvelope,
  NoRespondersError,
  NotDurableSubjectError,
  PayloadTooLargeError,
  type Bus,
  type BusMessage,
  type DurableMessage,
  type Envelope,
} from "../../../runtime/bus/index.ts";

/** Makes a fresh bus for a cluster namespace; errors from handlers go to `onHandlerError`. */
export type BusFactory = (cluster: string, onHandlerError: (err: unknown) => void) => Promise<Bus>;

const enc = new TextEncoder();
const dec = new TextDecoder();
export const bytes = (s: string): Uint8Array => enc.encode(s);
export const text = (b: Uint8Array): string => dec.decode(b);

export async function waitFor(cond: () => boolean, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

let clusterSeq = 0;
export function uniqueCluster(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${++clusterSeq}`;
}

export function busContract(factory: BusFactory): void {
  const open: Bus[] = [];
  const handlerErrors: unknown[] = [];
  const make = async (cluster = uniqueCluster("contract")) => {
    const bus = await factory(cluster, (err) => handlerErrors.push(err));
    open.push(bus);
    return bus;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((b) => b.close().catch(() => undefined)));
    handlerErrors.length = 0;
  });

  it("publishes to a subscriber, with headers, and never inside publish", async () => {
    const bus = await make();
    const got: BusMessage[] = [];
    bus.subscribe(`t.${bus.cluster}.hello`, (m) => void got.push(m));
    await flush(bus, `t.${bus.cluster}.hello`);
    got.length = 0;
    const p = bus.publish(`t.${bus.cluster}.hello`, bytes("hi"), { headers: { "X-Trace": "abc" } });
    expect(got).toHaveLength(0); // asynchronous delivery
    await p;
    await waitFor(() => got.length === 1);
    expect(got[0].subject).toBe(`t.${bus.cluster}.hello`);
    expect(text(got[0].data)).toBe("hi");
    expect(got[0].headers?.["X-Trace"]).toBe("abc");
    expect(got[0].reply).toBeUndefined();
  });

  it("delivers to an async-iterator subscription and ends the loop on unsubscribe", async () => {
    const bus = await make();
    const subject = `t.${bus.cluster}.iter`;
    const sub = bus.subscribe(subject);
    const seen: string[] = [];
    const loop = (async () => {
      for await (const m of sub) {
        seen.push(text(m.data));
        if (seen.length === 3) sub.unsubscribe();
      }
    })();
    for (const s of ["a", "b", "c"]) await bus.publish(subject, bytes(s));
    await loop;
    expect(seen).toEqual(["a", "b", "c"]);
    await sub.closed;
  });

  it("matches * to exactly one token", async () => {
    const bus = await make();
    const got: string[] = [];
    bus.subscribe(`w.${bus.cluster}.*.events`, (m) => void got.push(m.subject));
    await flush(bus, `w.${bus.cluster}.flush.events`);
    got.length = 0;
    await bus.publish(`w.${bus.cluster}.a.events`, bytes("1"));
    await bus.publish(`w.${bus.cluster}.a.b.events`, bytes("2"));
    await bus.publish(`w.${bus.cluster}.events`, bytes("3"));
    await bus.publish(`w.${bus.cluster}.b.events`, bytes("4"));
    await bus.publish(`w.${bus.cluster}.b.says`, bytes("5"));
    await waitFor(() => got.length >= 2);
    await settle();
    expect(got).toEqual([`w.${bus.cluster}.a.events`, `w.${bus.cluster}.b.events`]);
  });

  it("matches > to one or more trailing tokens", async () => {
    const bus = await make();
    const got: string[] = [];
    bus.subscribe(`g.${bus.cluster}.>`, (m) => void got.push(m.subject));
    await flush(bus, `g.${bus.cluster}.flush`);
    got.length = 0;
    await bus.publish(`g.${bus.cluster}`, bytes("no"));
    await bus.publish(`g.${bus.cluster}.a`, bytes("yes"));
    await bus.publish(`g.${bus.cluster}.a.b.c`, bytes("yes"));
    await bus.publish(`other.${bus.cluster}.a`, bytes("no"));
    await waitFor(() => got.length >= 2);
    await settle();
    expect(got).toEqual([`g.${bus.cluster}.a`, `g.${bus.cluster}.a.b.c`]);
  });

  it("gives each message to exactly one member of a queue group, using every member", async () => {
    const bus = await make();
    const subject = `q.${bus.cluster}.work`;
    const byMember: number[][] = [[], [], []];
    const everyone: number[] = [];
    byMember.forEach((list, i) => bus.subscribe(subject, (m) => void list.push(Number(text(m.data))), { queue: "workers" }));
    bus.subscribe(subject, (m) => void everyone.push(Number(text(m.data))));
    await flush(bus, `q.${bus.cluster}.flush`);
    const n = 60;
    for (let i = 0; i < n; i++) await bus.publish(subject, bytes(String(i)));
    await waitFor(() => byMember.flat().length === n && everyone.length === n, 5_000, "all queue deliveries");
    await settle();
    const all = byMember.flat().sort((a, b) => a - b);
    expect(all).toEqual([...Array(n).keys()]); // each exactly once
    for (const list of byMember) expect(list.length).toBeGreaterThan(0); // all members used
    expect(everyone).toHaveLength(n); // a plain subscriber still sees everything
  });

  it("answers a request, carrying headers both ways", async () => {
    const bus = await make();
    const subject = clusterSubjects(bus.cluster).gateVerify("echo");
    bus.subscribe(subject, (m) => void m.respond(bytes(text(m.data).toUpperCase() + (m.headers?.["X-Id"] ?? ""))), { queue: "echo" });
    await flush(bus, `r.${bus.cluster}.flush`);
    const reply = await bus.request(subject, bytes("ping"), { timeoutMs: 2_000, headers: { "X-Id": "7" } });
    expect(text(reply)).toBe("PING7");
  });

  it("times out a request nobody answers with BusTimeoutError", async () => {
    const bus = await make();
    const subject = `r.${bus.cluster}.silent`;
    bus.subscribe(subject, () => undefined);
    await flush(bus, `r.${bus.cluster}.flush`);
    const start = Date.now();
    const err = await bus.request(subject, bytes("?"), { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusTimeoutError);
    expect((err as BusTimeoutError).subject).toBe(subject);
    expect(Date.now() - start).toBeGreaterThanOrEqual(140);
  });

  it("fails a request with no subscriber at once with NoRespondersError", async () => {
    const bus = await make();
    const start = Date.now();
    const err = await bus.request(`r.${bus.cluster}.nobody`, bytes("?"), { timeoutMs: 3_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoRespondersError);
    expect(Date.now() - start).toBeLessThan(1_000);
  });

  it("keeps publish order per subscription (1,000 messages), handler and iterator alike", async () => {
    const bus = await make();
    const subject = `o.${bus.cluster}.seq`;
    const viaHandler: number[] = [];
    bus.subscribe(subject, async (m) => {
      if (Number(text(m.data)) % 100 === 0) await new Promise((r) => setTimeout(r, 1)); // a slow handler must not reorder
      viaHandler.push(Number(text(m.data)));
    });
    const sub = bus.subscribe(subject);
    const viaIterator: number[] = [];
    const loop = (async () => {
      for await (const m of sub) {
        viaIterator.push(Number(text(m.data)));
        if (viaIterator.length === 1000) break;
      }
    })();
    await flush(bus, `o.${bus.cluster}.flush`);
    for (let i = 0; i < 1000; i++) void bus.publish(subject, bytes(String(i)));
    await loop;
    await waitFor(() => viaHandler.length === 1000, 10_000, "1,000 handler deliveries");
    expect(viaHandler).toEqual([...Array(1000).keys()]);
    expect(viaIterator).toEqual([...Array(1000).keys()]);
  });

  it("keeps serving after a handler throws", async () => {
    const bus = await make();
    const subject = `e.${bus.cluster}.x`;
    const got: string[] = [];
    bus.subscribe(subject, (m) => {
      if (text(m.data) === "bad") throw new Error("handler blew up");
      got.push(text(m.data));
    });
    await flush(bus, `e.${bus.cluster}.flush`);
    await bus.publish(subject, bytes("bad"));
    await bus.publish(subject, bytes("good"));
    await waitFor(() => got.length === 1);
    expect(got).toEqual(["good"]);
    expect(handlerErrors.some((e) => e instanceof Error && e.message === "handler blew up")).toBe(true);
  });

  it("drains: the in-flight handler finishes (and may still respond), then publishing is rejected", async () => {
    const bus = await make();
    const subject = `d.${bus.cluster}.slow`;
    const started = deferred();
    const release = deferred();
    let finished = false;
    bus.subscribe(subject, async () => {
      started.resolve();
      await release.promise;
      await bus.publish(`d.${bus.cluster}.fromHandler`, bytes("still allowed"));
      finished = true;
    });
    await flush(bus, `d.${bus.cluster}.flush`);
    await bus.publish(subject, bytes("work"));
    await started.promise;
    let drained = false;
    const draining = bus.drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(drained).toBe(false);
    expect(() => bus.subscribe(`d.${bus.cluster}.late`, () => undefined)).toThrow(BusClosedError);
    release.resolve();
    await draining;
    expect(finished).toBe(true);
    await expect(bus.publish(subject, bytes("late"))).rejects.toBeInstanceOf(BusClosedError);
    await expect(bus.request(`d.${bus.cluster}.x`, bytes("late"), { timeoutMs: 100 })).rejects.toBeInstanceOf(BusClosedError);
    await bus.closed;
  });

  it("rejects malformed subjects, oversized payloads and requests on stream subjects", async () => {
    const bus = await make();
    await expect(bus.publish(`a.*.b`, bytes("x"))).rejects.toBeInstanceOf(InvalidSubjectError);
    await expect(bus.publish(`a..b`, bytes("x"))).rejects.toBeInstanceOf(InvalidSubjectError);
    await expect(bus.publish(`a b`, bytes("x"))).rejects.toBeInstanceOf(InvalidSubjectError);
    expect(() => bus.subscribe(`a.>.b`, () => undefined)).toThrow(InvalidSubjectError);
    expect(() => bus.subscribe(`a.b*`, () => undefined)).toThrow(InvalidSubjectError);
    await expect(bus.publish(`big.${bus.cluster}`, new Uint8Array(2 * 1024 * 1024))).rejects.toBeInstanceOf(PayloadTooLargeError);
    const perceive = clusterSubjects(bus.cluster).perceive("s1");
    await expect(bus.publish(perceive, new Uint8Array(2 * 1024 * 1024))).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(bus.request(perceive, bytes("x"), { timeoutMs: 100 })).rejects.toBeInstanceOf(InvalidSubjectError);
    await expect(bus.durable(`other.${bus.cluster}.>`, "c", () => undefined)).rejects.toBeInstanceOf(NotDurableSubjectError);
  });

  it("durable: a consumer gets what was published while it was not running, and nothing twice", async () => {
    const bus = await make();
    const s = clusterSubjects(bus.cluster);
    const got: string[] = [];
    const c1 = await bus.durable(s.allSouls("perceive"), "node1", (m) => void got.push(text(m.data)));
    await bus.publish(s.perceive("ann"), bytes("one"));
    await waitFor(() => got.length === 1, 5_000, "first durable delivery");
    await c1.stop();
    await bus.publish(s.perceive("ann"), bytes("two"));
    await bus.publish(s.perceive("bob"), bytes("three"));
    await bus.publish(s.says("ann"), bytes("not for this filter"));
    await new Promise((r) => setTimeout(r, 50));
    expect(got).toEqual(["one"]);
    const c2 = await bus.durable(s.allSouls("perceive"), "node1", (m) => void got.push(text(m.data)));
    await waitFor(() => got.length === 3, 5_000, "deliveries after restart");
    await settle();
    expect(got).toEqual(["one", "two", "three"]);
    await c2.stop();
  });

  it("durable: a handler that throws gets the message again", async () => {
    const bus = await make();
    const s = clusterSubjects(bus.cluster);
    const deliveries: DurableMessage[] = [];
    await bus.durable(s.perceive("ann"), "flaky", (m) => {
      deliveries.push(m);
      if (deliveries.length === 1) throw new Error("transient failure");
    }, { retryDelayMs: 20 });
    await bus.publish(s.perceive("ann"), bytes("retry me"));
    await waitFor(() => deliveries.length === 2, 5_000, "redelivery");
    expect(text(deliveries[1].data)).toBe("retry me");
    expect(deliveries[0]).toMatchObject({ redelivered: false, deliveryCount: 1 });
    expect(deliveries[1]).toMatchObject({ redelivered: true, deliveryCount: 2, seq: deliveries[0].seq });
    await settle(100);
    expect(deliveries).toHaveLength(2); // acked after the second, successful, delivery
  });

  it("durable: a message that fails every delivery is dead-lettered with its reason, and the consumer moves on", async () => {
    const bus = await make();
    const s = clusterSubjects(bus.cluster);
    const dead: BusMessage[] = [];
    bus.subscribe(s.dead, (m) => void dead.push(m));
    await flush(bus, `x.${bus.cluster}.flush`);
    const good: string[] = [];
    await bus.durable(s.perceive("ann"), "strict", (m) => {
      if (text(m.data) === "poison") throw new Error("cannot digest");
      good.push(text(m.data));
    }, { maxDeliver: 2, retryDelayMs: 10 });
    await bus.publish(s.perceive("ann"), bytes("poison"));
    await bus.publish(s.perceive("ann"), bytes("fine"));
    await waitFor(() => dead.length === 1 && good.length === 1, 5_000, "dead letter");
    const record = decodeDeadLetter(dead[0].data);
    expect(record).toMatchObject({ subject: s.perceive("ann"), size: 6, head: Buffer.from("poison").toString("base64") });
    expect(record?.reason).toContain("cannot digest");
  });

  it("durable: publishes with the same msgId are stored once", async () => {
    const bus = await make();
    const s = clusterSubjects(bus.cluster);
    const got: string[] = [];
    await bus.publish(s.says("ann"), bytes("hello"), { msgId: "turn1:0" });
    await bus.publish(s.says("ann"), bytes("hello again"), { msgId: "turn1:0" });
    await bus.publish(s.says("ann"), bytes("next"), { msgId: "turn1:1" });
    await bus.durable(s.says("ann"), "bridge", (m) => void got.push(text(m.data)));
    await waitFor(() => got.length === 2, 5_000, "deduplicated deliveries");
    await settle(100);
    expect(got).toEqual(["hello", "next"]);
  });

  it("durable: a new consumer may start from new messages only, and a name keeps its filter", async () => {
    const bus = await make();
    const s = clusterSubjects(bus.cluster);
    await bus.publish(s.perceive("ann"), bytes("old"));
    const got: string[] = [];
    const c = await bus.durable(s.perceive("ann"), "fresh", (m) => void got.push(text(m.data)), { deliver: "new" });
    await settle(100);
    await bus.publish(s.perceive("ann"), bytes("new"));
    await waitFor(() => got.length === 1, 5_000, "a new message");
    await settle(50);
    expect(got).toEqual(["new"]);
    await c.stop();
    await expect(bus.durable(s.perceive("bob"), "fresh", () => undefined)).rejects.toThrow(/already exists with filter/);
  });

  it("acceptEnvelopes: valid envelopes reach the actor, garbage goes to dead with its reason", async () => {
    const bus = await make();
    const s = clusterSubjects(bus.cluster);
    const dead: BusMessage[] = [];
    const seen: Envelope[] = [];
    bus.subscribe(s.dead, (m) => void dead.push(m));
    bus.subscribe(s.whisper("ann"), acceptEnvelopes(bus, (env) => void seen.push(env), { kinds: ["whisper"] }));
    await flush(bus, `x.${bus.cluster}.flush`);
    const good = makeEnvelope("whisper", "daimon", "ann", { content: "remember the river", source: "daimon" });
    await bus.publish(s.whisper("ann"), new Uint8Array([0xc1, 0xff, 0x00]));
    await bus.publish(s.whisper("ann"), encodeEnvelope(makeEnvelope("event", "x", "ann", { type: "ping" })));
    await bus.publish(s.whisper("ann"), encodeEnvelope(good));
    await waitFor(() => seen.length === 1 && dead.length === 2, 5_000, "accepted and dead-lettered");
    expect(seen[0]).toEqual(good);
    const reasons = dead.map((m) => decodeDeadLetter(m.data)?.reason ?? "");
    expect(reasons[0]).toMatch(/msgpack/);
    expect(reasons[1]).toMatch(/unexpected kind event/);
  });
}

/**
 * Makes sure subscriptions made so far are live on the server before publishing (NATS
 * subscriptions are asynchronous until the server has processed them). A round trip
 * through the bus itself does it without knowing which bus it is.
 */
export async function flush(bus: Bus, subject: string): Promise<void> {
  const sub = bus.subscribe(subject, (m) => void m.respond(new Uint8Array()));
  await bus.request(subject, new Uint8Array(), { timeoutMs: 5_000 });
  sub.unsubscribe();
}

/** Gives stray late deliveries a moment to show up before asserting that none came. */
export function settle(ms = 30): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
