/**
 * Realistic data for store tests and the store benchmark: an ActorState whose working
 * memory holds ~20 messages, as a soul's does after a short conversation.
 */
import type { ActorState, OutboxEntry } from "../../../runtime/store/types.ts";

const lines = [
  "I hear you. Tell me more about what happened after the meeting.",
  "It went fine at first, then everyone started talking over each other and I lost the thread.",
  "That sounds exhausting. What did you want to say before it got loud?",
  "That the deadline is unrealistic and we should cut scope instead of working weekends.",
];

export function sampleState(turn: number, messages = 20): ActorState {
  const memories = Array.from({ length: messages }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: lines[i % lines.length],
    name: i % 2 === 0 ? "Ada" : "Samantha",
    region: i === 0 ? "core" : "default",
    _id: `m-${turn}-${i}`,
    _timestamp: 1_700_000_000_000 + i * 1000,
  }));
  return {
    workingMemory: { soulName: "Samantha", memories, regionOrder: ["core", "default"] },
    soulMemory: { mood: "curious", userName: "Ada", topics: ["work", "deadlines"] },
    processMemory: { initialProcess: [turn, "greeted"] },
    currentProcess: "initialProcess",
    previousProcess: "initialProcess",
    invocationCounts: { initialProcess: turn },
    turn,
    snapshot: { status: "active", value: { initialProcess: "idle" }, context: { turn } },
    metadata: { displayName: "Samantha" },
  };
}

export function sampleOutbox(turn: number, n = 0): OutboxEntry {
  return { id: `turn-${turn}-${n}`, target: "ensoul.test.soul.samantha.says", payload: { text: `reply ${turn}.${n}`, final: true }, createdAt: 1_700_000_000_000 + turn };
}

/**
 * A state whose size changes from turn to turn (a few KB to tens of KB, so some turns need
 * overflow pages), derived from the turn alone: a reader can rebuild it and compare.
 */
export function crashState(turn: number): ActorState {
  const state = sampleState(turn, 10 + (turn % 5) * 10);
  return { ...state, soulMemory: { ...state.soulMemory, filler: `${turn}|`.repeat(1 + (turn % 7) * 2000) } };
}
