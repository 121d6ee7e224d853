/**
 * Every whisper is sanitised before it goes anywhere, whatever produced it. The sanitiser
 * lives in the kernel (runtime/cognition/sanitizeWhisper.ts), because the cognitive pipeline
 * uses it too and may not import actors/; the daimon re-exports it under the same names.
 */
export { sanitizeWhisper, WHISPER_MAX_CHARS, type SanitizeWhisperOptions } from "../../runtime/cognition/index.ts";
