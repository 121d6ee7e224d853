/**
 * What a soul reports of its tool calls on its events subject (as `soul.tool.call`, ...).
 * A call that the gates stopped is reported without its input: it was stopped perhaps for
 * what the input holds (a secret), which must not leave through the events subject either.
 */
export type ToolCallOutcome = "ok" | "error" | "timeout" | "rejected" | "invalid" | "replayed";

export type ToolEvent =
  /** The gates passed the call and it is about to run. */
  | { type: "tool.call"; soulId: string; turnId: string; callId: string; tool: string; input: unknown; remote: boolean }
  | { type: "tool.result"; soulId: string; turnId: string; callId: string; tool: string; outcome: ToolCallOutcome; ok: boolean; value?: unknown; reason?: string; durationMs: number }
  /** A non-idempotent call found started but never finished after a crash: not run again. */
  | { type: "tool.unknown"; soulId: string; turnId: string; callId: string; tool: string; reason: string };
