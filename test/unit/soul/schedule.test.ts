import { describe, expect, it } from "vitest";
import {
  createManualClock,
  createSoul,
  defineSoul,
  useActions,
  usePerceptions,
  useProcessManager,
  useSoulMemory,
  type MentalProcess,
  type PendingScheduledEvent,
} from "../../../actors/soul/index.ts";
import { useTestEnv } from "../../support/soul/env.ts";
import { record, said } from "../../support/soul/helpers.ts";

const env = useTestEnv();

const reminder: MentalProcess = async ({ workingMemory, params }) => {
  const { invokingPerception } = usePerceptions();
  useActions().speak(`reminder: ${invokingPerception.content} (${JSON.stringify(params)}) internal=${invokingPerception.internal}`);
  return workingMemory;
};

let lastPending: PendingScheduledEvent[] = [];
const chat: MentalProcess = async ({ workingMemory }) => {
  const { invokingPerception } = usePerceptions();
  const { scheduleEvent } = useActions();
  const { cancelScheduledEvent, pendingScheduledEvents } = useProcessManager();
  const scheduled = useSoulMemory<string | null>("scheduled", null);
  if (invokingPerception.content === "remind me") {
    scheduled.current = scheduleEvent({
      in: 60,
      process: reminder,
      perception: { action: "remembered", content: "drink water" },
      params: { urgent: true },
    });
  } else if (invokingPerception.content === "never mind" && scheduled.current) {
    cancelScheduledEvent(scheduled.current);
  }
  lastPending = pendingScheduledEvents.current;
  useActions().speak(`chat: ${invokingPerception.content}`);
  return workingMemory;
};

const blueprint = defineSoul({ name: "Timer", persona: "", initialProcess: chat, processes: { chat, reminder } });

describe("scheduled events", () => {
  it("fire as internal perceptions routed to the named process, and the soul returns to its current process", async () => {
    const clock = createManualClock(1_000_000);
    const soul = createSoul({ blueprint, id: "t", store: env.actor("t"), clock });
    const log = record(soul);
    await soul.perceive(said("remind me"));
    await soul.idle();
    expect(lastPending).toHaveLength(1);
    expect(lastPending[0]).toMatchObject({ process: "reminder", when: new Date(1_060_000) });
    expect(env.actor("t").schedules()).toHaveLength(1);

    clock.advance(59_000);
    await soul.idle();
    expect(log.said()).toEqual(["chat: remind me"]);
    clock.advance(1_000);
    await soul.idle();
    expect(log.said()).toEqual(["chat: remind me", 'reminder: drink water ({"urgent":true}) internal=true']);
    expect(soul.state().process).toBe("chat");
    // The schedule is spent in the same commit that processed it.
    expect(env.actor("t").schedules()).toHaveLength(0);
    // The reminder entered memory as the soul's own thought, not as user input.
    const reminderMemory = soul.memory().workingMemory.find((m) => m.content.includes("drink water"));
    expect(reminderMemory).toMatchObject({ role: "assistant", content: 'Timer remembered: "drink water"' });
    await soul.perceive(said("thanks"));
    await soul.idle();
    expect(log.said().at(-1)).toBe("chat: thanks");
    await soul.stop();
  });

  it("can be cancelled before they fire", async () => {
    const clock = createManualClock(0);
    const soul = createSoul({ blueprint, id: "c", store: env.actor("c"), clock });
    const log = record(soul);
    await soul.perceive(said("remind me"));
    await soul.perceive(said("never mind"));
    await soul.idle();
    expect(lastPending).toEqual([]);
    expect(env.actor("c").schedules()).toEqual([]);
    clock.advance(120_000);
    await soul.idle();
    expect(log.said()).toEqual(["chat: remind me", "chat: never mind"]);
    await soul.stop();
  });

  it("fire after a restart, at once when their time passed while the soul was down", async () => {
    const clock = createManualClock(0);
    const first = createSoul({ blueprint, id: "r", store: env.actor("r"), clock });
    await first.perceive(said("remind me"));
    await first.idle();
    await first.stop();
    await env.reopen();

    clock.advance(3_600_000);
    const second = createSoul({ blueprint, id: "r", store: env.actor("r"), clock });
    const log = record(second);
    clock.advance(0);
    await second.idle();
    expect(log.said()).toEqual(['reminder: drink water ({"urgent":true}) internal=true']);
    expect(env.actor("r").schedules()).toEqual([]);
    await second.stop();
  });

  it("rejects scheduling a process the blueprint does not have", async () => {
    const stranger: MentalProcess = async ({ workingMemory }) => workingMemory;
    const bad: MentalProcess = async ({ workingMemory }) => {
      useActions().scheduleEvent({ in: 1, process: stranger, perception: { action: "x", content: "y" } });
      return workingMemory;
    };
    const soul = createSoul({ blueprint: defineSoul({ name: "B", persona: "", initialProcess: bad, processes: { bad } }), id: "b", store: env.actor("b") });
    const log = record(soul);
    await soul.perceive(said("go"));
    await soul.idle();
    expect(log.errors()[0]).toMatch(/scheduleEvent\(\): function stranger is not a process of soul 'B'/);
    await soul.stop();
  });
});
