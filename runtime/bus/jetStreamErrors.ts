/** The JetStream errors ensoul tells apart, by code where the client gives one and by message where it does not. */

/** JetStream's "wrong last sequence": a compare-and-set (`Nats-Expected-Last-Subject-Sequence`) lost. */
export const WRONG_LAST_SEQUENCE = 10071;

export function isWrongLastSequence(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; api_error?: { err_code?: unknown } } | undefined;
  return e?.code === WRONG_LAST_SEQUENCE || e?.api_error?.err_code === WRONG_LAST_SEQUENCE || (typeof e?.message === "string" && /wrong last sequence/i.test(e.message));
}

export function isStreamNotFound(err: unknown): boolean {
  return err instanceof Error && (err.name === "StreamNotFoundError" || /stream not found/i.test(err.message));
}
