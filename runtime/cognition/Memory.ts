import { randomUUID } from "node:crypto";
import type { ChatRole } from "../providers/index.ts";

/** One entry of working memory, as in Open Souls. */
export interface Memory {
  id: string;
  role: ChatRole;
  content: string;
  name?: string;
  /** Absent means the `default` region. */
  region?: string;
  metadata?: Record<string, unknown>;
  timestamp: number;
}

/** What callers pass in: id and timestamp are filled in when missing. */
export type InputMemory = Omit<Memory, "id" | "timestamp"> & Partial<Pick<Memory, "id" | "timestamp">>;

/** Open Souls' role enum, kept so blueprints port with their imports only. */
export const ChatMessageRoleEnum = {
  System: "system",
  User: "user",
  Assistant: "assistant",
} as const satisfies Record<string, ChatRole>;

export const DEFAULT_REGION = "default";

export function regionOf(memory: Pick<Memory, "region">): string {
  return memory.region ?? DEFAULT_REGION;
}

export function toMemory(input: InputMemory): Memory {
  const memory: Memory = {
    id: input.id ?? randomUUID(),
    role: input.role,
    content: input.content,
    timestamp: input.timestamp ?? Date.now(),
  };
  if (input.name !== undefined) memory.name = input.name;
  if (input.region !== undefined && input.region !== DEFAULT_REGION) memory.region = input.region;
  if (input.metadata !== undefined) {
    assertPersistable(input.metadata, "metadata");
    memory.metadata = input.metadata;
  }
  return Object.freeze(memory);
}

/**
 * Memories are persisted with msgpack, whose decoder renames a `__proto__` key (its guard
 * against prototype pollution). Such a key would come back changed, so it is refused here,
 * where the caller can see why, instead of being altered silently in LMDB.
 */
function assertPersistable(value: unknown, path: string): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertPersistable(item, `${path}[${i}]`));
    return;
  }
  if (Object.hasOwn(value, "__proto__")) {
    throw new TypeError(`memory ${path} has a "__proto__" key, which cannot be persisted faithfully; rename it`);
  }
  for (const [key, item] of Object.entries(value)) assertPersistable(item, `${path}.${key}`);
}
