import { describe, expect, it } from "vitest";
import {
  createInProcessOutlet,
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  type MentalProcess,
  type Outlet,
  type Proposal,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { deferred, record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

const talker: MentalProcess = async ({ workingMemory }) => {
  const { speak, dispatch, log } = useActions();
  const content = usePerceptions().invokingPerception.content;
  speak(`echo ${content}`);
  dispatch({ action: "react", content: "thumbsup", emoji: ":+1:" });
  log("thinking about", { content });
  return workingMemory;
};
const blueprint = defineSoul({ name: "Talker", persona: "", initialProcess: talker, processes: { talker } });

describe("outlet", () => {
  it("sends every action as a proposal with stable ids, after the commit, to the in-process outlet", async () => {
    const outlet = createInProcessOutlet();
    const received: Proposal[] = [];
    outlet.onProposal((p) => {
      // Delivered only after the turn is durable.
      expect(env.actor("t").inboxEntry(p.causation as string)?.status).toBe("done");
      received.push(p);
    });
    const soul = createSoul({ blueprint, id: "t", store: env.actor("t"), outlet });
    const { id } = await soul.perceive({ ...said("hi"), meta: { channel: "C1" } });
    await soul.idle();
    expect(received.map((p) => ({ id: p.id, kind: p.kind, content: p.content, action: p.action, data: p.data }))).toEqual([
      { id: "t:1:0", kind: "speak", content: "echo hi", action: undefined, data: undefined },
      { id: "t:1:1", kind: "dispatch", content: "thumbsup", action: "react", data: { emoji: ":+1:" } },
      { id: "t:1:2", kind: "log", content: 'thinking about {"content":"hi"}', action: undefined, data: undefined },
    ]);
    expect(received[0]).toMatchObject({ soulId: "t", turnId: "t:1", seq: 0, causation: id, meta: { channel: "C1" } });
    expect(env.actor("t").pendingOutbox()).toEqual([]);
    await soul.stop();
  });

  it("lets review transform or intercept a proposal; a review that throws blocks it (fail closed)", async () => {
    const delivered: Proposal[] = [];
    const outlet: Outlet = {
      review(p) {
        if (p.kind === "dispatch") return { intercepted: true, kind: "event", reason: "reactions are off" };
        if (p.kind === "log") throw new Error("gate crashed");
        return { ...p, content: p.content.toUpperCase(), id: "forged" };
      },
      deliver: (p) => void delivered.push(p),
    };
    const soul = createSoul({ blueprint, id: "r", store: env.actor("r"), outlet });
    const log = record(soul);
    await soul.perceive(said("hi"));
    await soul.idle();
    expect(delivered.map((p) => [p.id, p.content])).toEqual([["r:1:0", "ECHO HI"]]);
    const intercepted = log.events.filter((e) => e.type === "intercepted");
    expect(intercepted.map((e) => e.type === "intercepted" && [e.proposal.kind, e.reason])).toEqual([
      ["dispatch", "reactions are off"],
      ["log", "review failed: gate crashed"],
    ]);
    await soul.stop();
  });

  it("gives review the perception each proposal answers, for a process's and a subprocess's proposals", async () => {
    const reviewed: { id: string; kind: string; perception: unknown }[] = [];
    const outlet: Outlet = {
      review(p, context) {
        reviewed.push({ id: p.id, kind: p.kind, perception: context?.perception });
        return p;
      },
      deliver: () => undefined,
    };
    const note: MentalProcess = async ({ workingMemory }) => {
      useActions().log(`noted ${usePerceptions().invokingPerception.content}`);
      return workingMemory;
    };
    const soul = createSoul({
      blueprint: defineSoul({ name: "Talker", persona: "", initialProcess: talker, processes: { talker }, subprocesses: [note] }),
      id: "p",
      store: env.actor("p"),
      outlet,
    });
    const first = await soul.perceive({ ...said("hi"), meta: { channel: "C1" } });
    await soul.idle();
    const second = await soul.perceive(said("again", "Bob"));
    await soul.idle();
    expect(reviewed.map((r) => r.id)).toEqual(["p:1:0", "p:1:1", "p:1:2", "p:1:sub:0", "p:2:0", "p:2:1", "p:2:2", "p:2:sub:0"]);
    for (const r of reviewed.slice(0, 4)) {
      expect(r.perception).toMatchObject({ id: first.id, action: "said", content: "hi", name: "Ada", meta: { channel: "C1" } });
    }
    for (const r of reviewed.slice(4)) expect(r.perception).toMatchObject({ id: second.id, content: "again", name: "Bob" });
    await soul.stop();
  });

  it("streams speech live as chunks and delivers the whole text once the turn commits", async () => {
    const outlet = createInProcessOutlet();
    const events: string[] = [];
    const release = deferred();
    outlet.onChunk(({ text }) => events.push(`chunk ${text}`));
    outlet.onProposal((p) => events.push(`final ${p.content}`));
    async function* words() {
      yield "Hello ";
      await release.promise;
      yield "there";
    }
    const streamer: MentalProcess = async ({ workingMemory }) => {
      useActions().speak(words());
      return workingMemory;
    };
    const soul = createSoul({
      blueprint: defineSoul({ name: "S", persona: "", initialProcess: streamer, processes: { streamer } }),
      id: "s",
      store: env.actor("s"),
      outlet,
    });
    await soul.perceive(said("hi"));
    await until(() => events.length > 0);
    await new Promise((r) => setTimeout(r, 10));
    expect(events).toEqual(["chunk Hello "]);
    expect(env.actor("s").loadState()).toBeUndefined();
    release.resolve();
    await soul.idle();
    expect(events).toEqual(["chunk Hello ", "chunk there", "final Hello there"]);
    await soul.stop();
  });
});
