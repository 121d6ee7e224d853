import type { Proposal } from "../vocabulary/index.ts";
import type { GateContext } from "./Gate.ts";
import type { ChainResult, GateChain } from "./gateChain.ts";

export const DEFAULT_MAX_ATTEMPTS = 3;

export interface RetryOptions {
  /** Proposals generated in all, the first included (default 3). */
  maxAttempts?: number;
}

export type RetryResult =
  | { ok: true; proposal: Proposal; attempts: number; feedback: string[]; result: Extract<ChainResult, { ok: true }> }
  | { ok: false; attempts: number; feedback: string[]; result: Extract<ChainResult, { ok: false }> };

/**
 * A reasoning step whose proposal a gate intercepted may try again, told why: the
 * rejection becomes feedback for the next prompt. Only plain interceptions are retried. A
 * hold waits for a human, and a gate error or timeout says nothing about the proposal, so
 * both end the attempts at once (blocked). The proposal returned here is still re-verified
 * when it is dispatched (gatedOutlet).
 */
export async function proposeWithRetries(
  generate: (feedback: string | undefined) => Promise<Proposal>,
  chain: GateChain,
  ctx: GateContext = {},
  options: RetryOptions = {},
): Promise<RetryResult> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  const feedback: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const proposal = await generate(feedback.at(-1));
    const result = await chain.run(proposal, { ...ctx, reasoning: true, attempt });
    if (result.ok) return { ok: true, proposal: result.proposal, attempts: attempt, feedback, result };
    if (result.decision !== "intercept" || attempt >= maxAttempts) return { ok: false, attempts: attempt, feedback, result };
    feedback.push(rejectionFeedback(result, attempt));
  }
}

/** What the next prompt is told about the rejected proposal. */
export function rejectionFeedback(result: Extract<ChainResult, { ok: false }>, attempt: number): string {
  return `Your previous proposal (attempt ${attempt}) was rejected by the ${result.gate} gate: ${result.interception.reason}. Propose something that satisfies it.`;
}
