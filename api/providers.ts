/**
 * `ensoul/providers`: the `LanguageModel` interface and its providers (Anthropic, Groq, the
 * offline model), retries, the cascade, consensus and the model registry, for choosing or
 * adding a model. The folder's index.ts is its public surface (DESIGN.md).
 */
export * from "../runtime/providers/index.ts";
