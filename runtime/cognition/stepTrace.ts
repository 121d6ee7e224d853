/**
 * What a cognitive step did, for whoever watches the turn (the soul's turn log, the debugger):
 * the memory it ran on, the prompt it sent, the model's raw answer and the parsed value, the
 * model, the tokens and the time it took. Built only when the cognition context has an
 * `onStep` listener, so a soul nobody traces pays nothing.
 */
import type { ChatMessage, Completion, Usage } from "../providers/index.ts";

export interface StepTrace {
  step: string;
  /** `provider:model` as resolved for the call (the model that answered, once known). */
  model: string;
  /** The working memory's memories the step ran on (the objects themselves: the listener may match them by identity). */
  memories: readonly unknown[];
  /** The prompt: one message per memory (fenced as the model saw them), then the step's command. */
  messages: readonly ChatMessage[];
  raw?: string;
  value?: unknown;
  usage: Usage;
  latencyMs: number;
  error?: string;
}

export type StepTraceListener = (trace: StepTrace) => void;

/** One step's trace while it runs: usage is added per model call (a JSON step may retry). */
export class StepTally {
  readonly #listener: StepTraceListener;
  readonly #trace: Omit<StepTrace, "latencyMs">;
  readonly #started = performance.now();

  constructor(listener: StepTraceListener, step: string, model: string, memories: readonly unknown[], messages: readonly ChatMessage[]) {
    this.#listener = listener;
    this.#trace = { step, model, memories, messages, usage: { inputTokens: 0, outputTokens: 0 } };
  }

  add(completion: Completion): void {
    this.#trace.usage.inputTokens += completion.usage.inputTokens;
    this.#trace.usage.outputTokens += completion.usage.outputTokens;
    this.#trace.model = `${completion.provider}:${completion.model}`;
  }

  done(raw: unknown, value: unknown): void {
    this.#send({ raw: typeof raw === "string" ? raw : JSON.stringify(raw), value });
  }

  failed(error: unknown): void {
    this.#send({ error: (error as Error)?.message ?? String(error) });
  }

  #send(outcome: Pick<StepTrace, "raw" | "value" | "error">): void {
    try {
      this.#listener({ ...this.#trace, ...outcome, latencyMs: Math.round((performance.now() - this.#started) * 10) / 10 });
    } catch {
      // The watcher's failure is not the step's.
    }
  }
}
