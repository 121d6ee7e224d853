/**
 * The soul file: one JSON document with everything a soul is, what `ensoul soul export`
 * writes and `ensoul soul import` reads. docs/SOUL-FILE.md is its specification; this file
 * is its types and the checks a file must pass before anything is written from it.
 *
 * A reader refuses what it does not know rather than drop it: a newer format version, a
 * field it has no place for. Otherwise an import by an older ensoul would lose part of a
 * soul without a word. Values inside the soul (memories, soul memory, perceptions...) are
 * the soul's own business and are not checked beyond what the store needs.
 */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import type { ActorKvEntry, DumpedInboxEntry } from "./ActorTransfer.ts";
import { fromJsonValue } from "./soulFileValues.ts";
import { StoreError, type OutboxEntry, type ScheduledEntry } from "./types.ts";
import type { UserModelVersion } from "./userModels.ts";
import { formatPath } from "./fieldPath.ts";

export const SOUL_FILE_FORMAT = "ensoul-soul";
/** Raised whenever a reader of the previous version would misread or lose something. */
export const SOUL_FILE_VERSION = 1;

/** The soul's committed state at a turn boundary (runtime/store ActorState, plus `nextParams`). */
export interface SoulFileState {
  turn: number;
  currentProcess: string;
  previousProcess?: string;
  /** Params a transition left for the current process's next run: read from `snapshot`, shown for readers. */
  nextParams: Record<string, unknown> | null;
  invocationCounts: Record<string, number>;
  /** `{ soulName, regionOrder, memories }`, the memories in order. */
  workingMemory: { memories: Record<string, unknown>[]; [field: string]: unknown };
  soulMemory: Record<string, unknown>;
  processMemory: Record<string, unknown[]>;
  metadata?: Record<string, unknown>;
  /** The soul machine's persisted snapshot at the turn boundary, kept as it is. */
  snapshot?: unknown;
}

export interface SoulFileUserModel {
  user: string;
  /** Oldest first. */
  versions: UserModelVersion[];
}

export interface SoulFile {
  format: typeof SOUL_FILE_FORMAT;
  formatVersion: typeof SOUL_FILE_VERSION;
  /** ISO 8601; the one field two exports of an unchanged soul differ in. */
  exportedAt: string;
  soul: { id: string; blueprint: { name: string } };
  state: SoulFileState;
  schedules: ScheduledEntry[];
  userModels: SoulFileUserModel[];
  /** Every other key/value namespace of the soul. */
  kv: ActorKvEntry[];
  inbox: DumpedInboxEntry[];
  outbox: OutboxEntry[];
}

/** A file that is not a soul file, or not one this ensoul can read. The message names the file and the field. */
export class SoulFileError extends StoreError {
  constructor(message: string) {
    super(message);
    this.name = "SoulFileError";
  }
}

const record = z.record(z.string(), z.unknown());
const keyPart = z.union([z.string(), z.number()]);

const stateSchema = z.strictObject({
  turn: z.number().int().nonnegative(),
  currentProcess: z.string().min(1),
  previousProcess: z.string().optional(),
  nextParams: record.nullable(),
  invocationCounts: z.record(z.string(), z.number().int().nonnegative()),
  workingMemory: z.looseObject({ memories: z.array(z.looseObject({ role: z.string(), content: z.string() })) }),
  soulMemory: record,
  processMemory: z.record(z.string(), z.array(z.unknown())),
  metadata: record.optional(),
  snapshot: z.unknown().optional(),
});

const versionSchema = z.strictObject({ version: z.number().int().positive(), markdown: z.string(), changeNote: z.string(), ts: z.number() });

const fileSchema = z.strictObject({
  format: z.literal(SOUL_FILE_FORMAT),
  formatVersion: z.literal(SOUL_FILE_VERSION),
  exportedAt: z.string(),
  soul: z.strictObject({ id: z.string().min(1), blueprint: z.strictObject({ name: z.string().min(1) }) }),
  state: stateSchema,
  schedules: z.array(z.strictObject({ id: z.string(), at: z.number(), process: z.string(), perception: z.unknown(), params: record.optional() })),
  userModels: z.array(z.strictObject({ user: z.string().min(1), versions: z.array(versionSchema).min(1) })),
  kv: z.array(z.strictObject({ namespace: z.string(), key: z.array(keyPart).min(1), value: z.unknown() })),
  inbox: z.array(
    z.strictObject({
      id: z.string(),
      perception: z.unknown(),
      status: z.enum(["pending", "error"]),
      error: z.string().optional(),
      attempts: z.number().int().nonnegative(),
      receivedAt: z.number(),
    }),
  ),
  outbox: z.array(z.strictObject({ id: z.string(), target: z.string(), payload: z.unknown(), createdAt: z.number() })),
});

function issueLine(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    // An unknown field is most likely from a newer ensoul: say so rather than drop it.
    const where = formatPath([...issue.path, issue.keys[0] as string]);
    return `${where}: unknown field (from a newer ensoul? this one reads format version ${SOUL_FILE_VERSION})`;
  }
  const problem = issue.code === "invalid_type" && /received undefined/.test(issue.message) ? "required" : issue.message.replace(/^Invalid input: /, "");
  return `${formatPath(issue.path) || "(document)"}: ${problem}`;
}

/** The format and version first: a file that is not a soul file, or a newer one, is told so before any field. */
function checkFormat(doc: unknown, source: string): void {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new SoulFileError(`${source} is not a soul file: it is JSON, but not an object`);
  const { format, formatVersion } = doc as { format?: unknown; formatVersion?: unknown };
  if (format !== SOUL_FILE_FORMAT) {
    throw new SoulFileError(`${source} is not a soul file: its "format" is ${format === undefined ? "missing" : JSON.stringify(format)}, not "${SOUL_FILE_FORMAT}" (write one with ensoul soul export)`);
  }
  if (typeof formatVersion !== "number" || !Number.isInteger(formatVersion) || formatVersion < 1) {
    throw new SoulFileError(`${source}: formatVersion must be a whole number from 1, got ${JSON.stringify(formatVersion)}`);
  }
  if (formatVersion > SOUL_FILE_VERSION) {
    throw new SoulFileError(`${source} is soul file format version ${formatVersion}, from a newer ensoul; this one reads version ${SOUL_FILE_VERSION}: upgrade ensoul to import it`);
  }
}

/** What the schema cannot say: the fields that must agree with each other. */
function checkConsistency(file: SoulFile, source: string): void {
  const { state } = file;
  const fromSnapshot = (state.snapshot as { context?: { nextParams?: unknown } } | undefined)?.context?.nextParams ?? null;
  if (!isDeepStrictEqual(fromSnapshot, state.nextParams)) {
    throw new SoulFileError(
      `${source}: state.nextParams does not match state.snapshot.context.nextParams; the snapshot is what the soul resumes from, so change both (or neither)`,
    );
  }
  file.inbox.forEach((entry, i) => {
    // The soul marks an entry done by its perception's id: a different one would be replayed at every start.
    const id = (entry.perception as { id?: unknown } | null)?.id;
    if (id !== entry.id) throw new SoulFileError(`${source}: inbox[${i}].perception.id must be the entry's id ${JSON.stringify(entry.id)}, got ${JSON.stringify(id)}`);
  });
  const users = new Set<string>();
  file.userModels.forEach((model, i) => {
    if (users.has(model.user)) throw new SoulFileError(`${source}: userModels[${i}]: user ${JSON.stringify(model.user)} appears twice`);
    users.add(model.user);
    model.versions.forEach((v, j) => {
      const previous = model.versions[j - 1];
      if (previous && v.version <= previous.version) {
        throw new SoulFileError(`${source}: userModels[${i}].versions[${j}]: versions must go up, oldest first (${previous.version} then ${v.version})`);
      }
    });
  });
}

/**
 * Reads a soul file's text: JSON, then the tagged values decoded (soulFileValues.ts), then
 * checked. `source` (the file name) starts every error message.
 */
export function parseSoulFile(text: string, source: string): SoulFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SoulFileError(`${source} is not a soul file: not JSON (${(error as Error).message})`);
  }
  checkFormat(json, source);
  let doc: unknown;
  try {
    doc = fromJsonValue(json, "");
  } catch (error) {
    throw new SoulFileError(`${source}: ${(error as Error).message.replace(/^\./, "")}`);
  }
  const checked = fileSchema.safeParse(doc);
  if (!checked.success) {
    const [first] = checked.error.issues;
    const more = checked.error.issues.length > 1 ? ` (and ${checked.error.issues.length - 1} more)` : "";
    throw new SoulFileError(`${source}: ${issueLine(first as z.core.$ZodIssue)}${more}`);
  }
  // The document as read, not zod's copy: zod's output may drop a field holding undefined, and a round trip must keep it.
  const file = doc as SoulFile;
  checkConsistency(file, source);
  return file;
}
