/**
 * `ensoul/bus`: the `Bus` interface, the in-process and NATS buses, subjects and the
 * envelope codec of docs/PROTOCOL.md, for a client or actor that joins a cluster. The
 * folder's index.ts is its public surface (DESIGN.md).
 */
export * from "../runtime/bus/index.ts";
