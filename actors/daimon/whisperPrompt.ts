/**
 * How a whisper reaches the soul's mind: as embodied recall, never as a directive. The format
 * lives in the kernel (runtime/cognition/daimonicIntuition.ts), because the cognitive pipeline
 * shows the same block and may not import actors/; the daimon re-exports it under the same names.
 */
export {
  DAIMONIC_REGION,
  DAIMONIC_WHISPER_KEY,
  daimonicMemory,
  formatDaimonicIntuition,
  readDaimonicWhisper,
  withDaimonicIntuition,
  withoutDaimonicIntuition,
  type DaimonicWhisper,
} from "../../runtime/cognition/index.ts";
