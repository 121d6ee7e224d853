/**
 * Parallel consensus (neurosymbolic-bridge: "query multiple backends simultaneously to
 * resolve hallucinations or select the best thought").
 *
 * All members are asked at once, so the wall time is the slowest answer within the deadline,
 * not the sum. At the deadline the stragglers are aborted (their HTTP requests cancelled) and
 * listed as failures: a consensus that waits for the slowest provider is only as available
 * as its worst member.
 */
import type { z } from "zod";
import type { CompletionRequest, Usage } from "./LanguageModel.ts";
import { addUsage, zeroUsage } from "./LanguageModel.ts";
import { canonicalJson, parseJsonText } from "./jsonAnswer.ts";
import { normaliseTarget, type ModelTarget, type NormalisedTarget } from "./ModelTarget.ts";
import { ProviderError, isProviderError, type ProviderFailureKind } from "./ProviderError.ts";

export type ConsensusMode = "all" | "majority";

export interface ConsensusOptions<T> {
  deadlineMs: number;
  /** "all" returns every answer; "majority" also votes. Defaults to "all". */
  mode?: ConsensusMode;
  /** Answers are JSON to be parsed and validated; an answer that fails is a `format` failure. */
  schema?: z.ZodType<T>;
  /** Applied to each answer's text before parsing or voting (e.g. lower-casing a label). */
  normalise?: (text: string) => string;
}

export interface ConsensusAnswer<T> {
  provider: string;
  model: string;
  text: string;
  /** The parsed, validated value when a schema was given. */
  value?: T;
  usage: Usage;
  latencyMs: number;
}

export interface ConsensusFailure {
  /** The member's label (`provider` or `provider:modelId`). */
  provider: string;
  error: Error;
  /** The answer's text when it arrived but was unusable. */
  text?: string;
}

export interface ConsensusTally {
  /** What was voted on: canonical JSON with a schema, the normalised text without. */
  key: string;
  votes: number;
  providers: string[];
}

export interface ConsensusResult<T> {
  /** Usable answers, in order of arrival. */
  answers: ConsensusAnswer<T>[];
  failures: ConsensusFailure[];
  /** In "majority" mode: the first-arrived answer of the most-voted group. */
  winner?: ConsensusAnswer<T>;
  /** In "majority" mode: every group, most votes first (ties: earliest arrival first). */
  tally?: ConsensusTally[];
  /** Everything the members consumed, unusable answers included: it was paid for. */
  usage: Usage;
  elapsedMs: number;
}

/** No usable answer. Carries the failures so the caller can see each member's reason. */
export class ConsensusError extends ProviderError {
  readonly failures: readonly ConsensusFailure[];

  constructor(failures: readonly ConsensusFailure[]) {
    const kinds = failures.map((f) => (isProviderError(f.error) ? f.error.kind : undefined));
    const first = kinds[0];
    const kind: ProviderFailureKind = first !== undefined && kinds.every((k) => k === first) ? first : "server";
    const detail = failures.map((f) => `${f.provider}: ${f.error.message}`).join("; ");
    super({ provider: "consensus", kind, message: `no valid answer from ${failures.length} provider(s): ${detail}` });
    this.name = "ConsensusError";
    this.failures = failures;
  }
}

export async function consensus<T = unknown>(
  models: readonly ModelTarget[],
  request: CompletionRequest,
  options: ConsensusOptions<T>,
): Promise<ConsensusResult<T>> {
  if (models.length === 0) throw new Error("consensus needs at least one model");
  const mode = options.mode ?? "all";
  const targets = models.map(normaliseTarget);
  const started = performance.now();

  const controller = new AbortController();
  const onCallerAbort = (): void => controller.abort();
  request.signal?.addEventListener("abort", onCallerAbort, { once: true });
  if (request.signal?.aborted) controller.abort();

  let deadlinePassed = false;
  let rejectDeadline!: (e: unknown) => void;
  // Raced against every call, so even a member that ignores its abort signal cannot hold us past the deadline.
  const deadline = new Promise<never>((_, reject) => {
    rejectDeadline = reject;
  });
  deadline.catch(() => undefined);
  const timer = setTimeout(() => {
    deadlinePassed = true;
    rejectDeadline(new Error("deadline"));
    controller.abort();
  }, options.deadlineMs);

  const answers: ConsensusAnswer<T>[] = [];
  const failures: ConsensusFailure[] = [];
  const keys = new Map<ConsensusAnswer<T>, string>();
  let usage = zeroUsage();

  const ask = async (t: NormalisedTarget): Promise<void> => {
    const { model: _ignored, ...rest } = request;
    const memberRequest: CompletionRequest = {
      ...rest,
      ...(t.modelId !== undefined ? { model: t.modelId } : {}),
      signal: controller.signal,
    };
    let completion;
    try {
      completion = await Promise.race([t.model.complete(memberRequest), deadline]);
    } catch (e) {
      failures.push({ provider: t.label, error: describeFailure(e, t, deadlinePassed, request.signal, options.deadlineMs) });
      return;
    }
    usage = addUsage(usage, completion.usage);
    const text = options.normalise ? options.normalise(completion.text) : completion.text;
    const latencyMs = Math.round(performance.now() - started);
    const answer: ConsensusAnswer<T> = {
      provider: completion.provider,
      model: completion.model,
      text: completion.text,
      usage: completion.usage,
      latencyMs,
    };
    if (!options.schema) {
      keys.set(answer, text.trim().replace(/\s+/g, " "));
      answers.push(answer);
      return;
    }
    const parsed = parseJsonText(text);
    const checked = parsed.ok ? options.schema.safeParse(parsed.value) : undefined;
    if (!checked?.success) {
      const why = !parsed.ok
        ? `not JSON (${parsed.error})`
        : `does not match the schema (${checked?.error.issues.map((i) => `${i.path.join(".") || "value"}: ${i.message}`).join(", ")})`;
      const error = new ProviderError({ provider: t.model.provider, kind: "format", message: `answer ${why}` });
      failures.push({ provider: t.label, error, text: completion.text });
      return;
    }
    answer.value = checked.data;
    keys.set(answer, canonicalJson(checked.data));
    answers.push(answer);
  };

  try {
    await Promise.all(targets.map(ask));
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onCallerAbort);
  }
  const elapsedMs = Math.round(performance.now() - started);

  if (request.signal?.aborted) {
    throw new ProviderError({ provider: "consensus", kind: "aborted", message: "consensus aborted by the caller" });
  }
  if (answers.length === 0) throw new ConsensusError(failures);
  if (mode === "all") return { answers, failures, usage, elapsedMs };

  const tally = vote(answers, keys);
  const best = tally[0];
  const winner = best ? answers.find((a) => keys.get(a) === best.key) : undefined;
  return { answers, failures, ...(winner ? { winner } : {}), tally, usage, elapsedMs };
}

/** Groups by key; answers are in arrival order, so a stable sort by votes breaks ties by first arrival. */
function vote<T>(answers: readonly ConsensusAnswer<T>[], keys: Map<ConsensusAnswer<T>, string>): ConsensusTally[] {
  const groups = new Map<string, ConsensusTally>();
  for (const a of answers) {
    const key = keys.get(a) ?? a.text;
    const group = groups.get(key) ?? { key, votes: 0, providers: [] };
    group.votes += 1;
    group.providers.push(a.provider);
    groups.set(key, group);
  }
  return [...groups.values()].sort((x, y) => y.votes - x.votes);
}

function describeFailure(
  e: unknown,
  t: NormalisedTarget,
  deadlinePassed: boolean,
  callerSignal: AbortSignal | undefined,
  deadlineMs: number,
): Error {
  // A member aborted by our deadline failed by being slow, and should say so.
  if (deadlinePassed && !callerSignal?.aborted && (!isProviderError(e) || e.kind === "aborted")) {
    return new ProviderError({
      provider: t.model.provider,
      kind: "timeout",
      message: `no answer within the ${deadlineMs}ms consensus deadline`,
      ...(e instanceof Error && e.message !== "deadline" ? { cause: e } : {}),
    });
  }
  return e instanceof Error ? e : new Error(String(e));
}
