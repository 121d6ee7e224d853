/**
 * Speech whose delivery failed is delivered again from the outbox, with backoff, without
 * waiting for another perception or activation, and nothing the soul says later goes out
 * before it. Time is a manual clock: the test moves it past each backoff.
 */
import { describe, expect, it } from "vitest";
import {
  createManualClock,
  createSoul,
  createSoulHost,
  defineSoul,
  useActions,
  usePerceptions,
  type MentalProcess,
  type Outlet,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said, until } from "../../support/soul/helpers.ts";

const env = useTestEnv();

const echo: MentalProcess = async ({ workingMemory }) => {
  useActions().speak(`echo: ${usePerceptions().invokingPerception.content}`);
  return workingMemory;
};
const blueprint = defineSoul({ name: "Echo", persona: "says back what it hears", initialProcess: echo, processes: { echo } });

/** An outlet that refuses every delivery while `down`, and otherwise records what it got, in order. */
function flakyOutlet(): Outlet & { down: boolean; delivered: string[]; chunks: string[] } {
  const outlet = {
    down: true,
    delivered: [] as string[],
    chunks: [] as string[],
    chunk(_soulId: string, proposalId: string) {
      outlet.chunks.push(proposalId);
    },
    deliver(proposal: { content: string }) {
      if (outlet.down) throw new Error("the bus is down");
      outlet.delivered.push(proposal.content);
    },
  };
  return outlet;
}

describe("speech whose delivery failed", () => {
  it("is delivered again with backoff, without a new perception, and later speech never overtakes it", async () => {
    const clock = createManualClock(1_000);
    const outlet = flakyOutlet();
    const soul = createSoul({ blueprint, id: "echo", store: env.actor("echo"), outlet, clock });
    const log = record(soul);

    await soul.perceive(said("one"));
    await soul.idle();
    expect(log.events).toContainEqual(expect.objectContaining({ type: "error", phase: "deliver", message: expect.stringMatching(/^the bus is down; /) }));
    await soul.perceive(said("two"));
    await soul.idle();
    // "two" waits behind "one", though the outlet would fail it too: nothing was tried out of order.
    expect(outlet.delivered).toEqual([]);
    expect(env.actor("echo").pendingOutbox().map((e) => (e.payload as { content: string }).content)).toEqual(["echo: one", "echo: two"]);

    // Still down at the first retry: tried again later, longer.
    clock.advance(250);
    await until(() => log.errors().length === 2);
    expect(outlet.delivered).toEqual([]);

    outlet.down = false;
    clock.advance(30_000);
    await until(() => outlet.delivered.length === 2);
    await soul.idle();
    expect(outlet.delivered).toEqual(["echo: one", "echo: two"]);
    expect(env.actor("echo").pendingOutbox()).toEqual([]);

    // Back to normal: the next answer goes out at once.
    await soul.perceive(said("three"));
    await soul.idle();
    expect(outlet.delivered).toEqual(["echo: one", "echo: two", "echo: three"]);
    await soul.stop();
  });

  it("holds back the chunks of later speech while earlier speech waits", async () => {
    async function* words(text: string) {
      for (const word of text.split(" ")) yield `${word} `;
    }
    const streamer: MentalProcess = async ({ workingMemory }) => {
      useActions().speak(words(`echo: ${usePerceptions().invokingPerception.content}`));
      return workingMemory;
    };
    const clock = createManualClock(1_000);
    const outlet = flakyOutlet();
    const soul = createSoul({ blueprint: defineSoul({ name: "S", persona: "", initialProcess: streamer, processes: { streamer } }), id: "s", store: env.actor("s"), outlet, clock });
    await soul.perceive(said("one"));
    await soul.idle();
    // The first answer streamed: nothing waited yet when it did.
    expect(outlet.chunks).toEqual(["s:1:0", "s:1:0"]);
    await soul.perceive(said("two"));
    await soul.idle();
    // The second would have reached listeners ahead of the first one's final.
    expect(outlet.chunks).toEqual(["s:1:0", "s:1:0"]);

    outlet.down = false;
    clock.advance(250);
    await until(() => outlet.delivered.length === 2);
    expect(outlet.delivered).toEqual(["echo: one ", "echo: two "]);
    await soul.perceive(said("three"));
    await soul.idle();
    expect(outlet.chunks).toEqual(["s:1:0", "s:1:0", "s:3:0", "s:3:0"]);
    await soul.stop();
  });

  it("keeps its soul from being passivated, and stops being retried when the soul stops", async () => {
    const clock = createManualClock(1_000);
    const outlet = flakyOutlet();
    const host = createSoulHost({ blueprint, store: (id) => env.actor(id), outlet, clock });
    await host.perceive("echo", said("one"));
    await (await host.get("echo")).idle();
    expect(await host.passivateIdle(0)).toEqual([]);
    expect(host.live()).toEqual(["echo"]);

    await host.close();
    expect(clock.pending()).toBe(0);
    expect(env.actor("echo").pendingOutbox()).toHaveLength(1);
  });
});
