/** The HTTP bridge (docs/HTTP.md): perceptions in by POST or WebSocket, speech out by SSE or WebSocket. */
export { startHttpBridge } from "./HttpBridge.ts";
export { httpOptionsSchema, parseHttpOptions, type HttpBridgeOptions } from "./httpOptions.ts";
export { SpeechLog, type SpeechEvent } from "./SpeechLog.ts";
