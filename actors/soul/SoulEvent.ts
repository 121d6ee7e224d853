import type { Proposal } from "../vocabulary/index.ts";
import type { ToolEvent } from "../tool/index.ts";

/**
 * What a soul reports about itself, for debuggers and the events subject: never speech.
 * Errors are events too: the soul keeps running, and the failed perception stays in the
 * inbox with its error.
 */
export type SoulEvent =
  /** `turnId` (`<soulId>:<turn>`, `...:sub` for subprocesses) is what the turn's speech carries as its trace. */
  | { type: "turn"; soulId: string; turn: number; process: string; perceptionId: string; durationMs: number; turnId: string }
  | { type: "transition"; soulId: string; from: string; to: string; executeNow: boolean; perceptionId: string; turnId: string }
  /**
   * `turnId`, when the failure happened inside a turn, is the trace that turn's lines and events carry; `at`, for an
   * error the soul's code threw, where in its own source (`<file>:<line>:<column>`, FailedTurn.ts).
   */
  | { type: "error"; soulId: string; phase: SoulErrorPhase; message: string; perceptionId?: string; process?: string; turnId?: string; at?: string }
  | { type: "log"; soulId: string; message: string; process?: string; data?: Record<string, unknown> }
  | { type: "intercepted"; soulId: string; proposal: Proposal; kind: "log" | "event"; reason: string }
  | { type: "whisper"; soulId: string; source: string }
  /** A whisper that was not kept (nothing usable was left once sanitised). */
  | { type: "whisperIgnored"; soulId: string; source: string; reason: string }
  | { type: "scheduled"; soulId: string; id: string; process: string; at: number }
  | { type: "expired"; soulId: string }
  /** Tool calls and their results (actors/tool ToolEvent.ts). */
  | ToolEvent;

export type SoulErrorPhase = "process" | "subprocess" | "commit" | "deliver" | "schedule" | "restore";

export type SoulEventListener = (event: SoulEvent) => void;
