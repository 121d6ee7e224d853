/**
 * What a soul writes in one LMDB transaction: its state, with the snapshot it rests in, and
 * whatever else the turn produced (the inbox entry it answered, speech for the outbox,
 * schedules, KV). Built here, written by SoulRuntime through SoulWrites, in order.
 */
import type { DaimonicWhisper } from "../../runtime/cognition/index.ts";
import { DAIMONIC_WHISPER_KEY } from "../../runtime/cognition/index.ts";
import type { InboxRecord, OutboxEntry, TurnCommit } from "../../runtime/store/index.ts";
import type { Proposal } from "../vocabulary/index.ts";
import { restingSnapshot } from "./restingSnapshot.ts";
import type { SoulMachine } from "./soulMachine.ts";
import { toActorState, type SoulState } from "./SoulState.ts";
import type { TurnDraft } from "./TurnDraft.ts";

/** The state alone, resting in its current process. */
export function stateCommit(state: SoulState, machine: SoulMachine): TurnCommit {
  return { state: toActorState(state, restingSnapshot(machine, state.currentProcess, state.nextParams)) };
}

/** A daimon's whisper kept in soul memory until a turn recalls it. */
export function whisperCommit(base: SoulState, machine: SoulMachine, whisper: DaimonicWhisper): { state: SoulState; commit: TurnCommit } {
  const state = { ...base, soulMemory: { ...base.soulMemory, [DAIMONIC_WHISPER_KEY]: whisper } };
  return { state, commit: stateCommit(state, machine) };
}

/** A draft's writes besides its state, fixed when the turn is reviewed. */
export interface DraftWrites {
  readonly outbox: OutboxEntry[];
  readonly schedulesPut: TurnCommit["schedulesPut"] & object;
  readonly schedulesDelete: string[];
  readonly kv: TurnCommit["kv"] & object;
}

export function draftWrites(draft: TurnDraft, proposals: readonly Proposal[], createdAt: number): DraftWrites {
  return {
    outbox: proposals.map((p) => ({ id: p.id, target: "outlet", payload: p, createdAt })),
    schedulesPut: [...draft.schedulesPut.values()],
    schedulesDelete: [...draft.schedulesDelete],
    kv: [...draft.kvWrites],
  };
}

/**
 * The turn's commit. `inbox` is the perception it answered: a `record` when the soul held it
 * unwritten (written and marked done in this commit), else the id of the inbox entry to mark done.
 */
export function turnCommitOf(state: SoulState, machine: SoulMachine, writes: DraftWrites, inbox: { record?: InboxRecord | undefined; done?: string | undefined }): TurnCommit {
  const commit = stateCommit(state, machine);
  if (inbox.record) commit.inboxRecord = inbox.record;
  else if (inbox.done !== undefined) commit.inboxDone = inbox.done;
  if (writes.outbox.length) commit.outbox = writes.outbox;
  if (writes.schedulesPut.length) commit.schedulesPut = writes.schedulesPut;
  if (writes.schedulesDelete.length) commit.schedulesDelete = writes.schedulesDelete;
  if (writes.kv.length) commit.kv = writes.kv;
  return commit;
}
