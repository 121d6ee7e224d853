/**
 * A control request that cannot be served, with the code a client maps to its own answer
 * (the debugger's 404, 400 and 409): `{ error, code }` on the wire (controlProtocol.ts).
 */
import type { ControlErrorCode } from "./controlProtocol.ts";

export class ControlRequestError extends Error {
  readonly code: ControlErrorCode;
  constructor(code: ControlErrorCode, message: string) {
    super(message);
    this.name = "ControlRequestError";
    this.code = code;
  }
}
