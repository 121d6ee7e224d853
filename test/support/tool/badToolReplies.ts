/**
 * Tool call replies that break PROTOCOL.md (§4 encoding, §14 fields), written byte by byte as
 * another language's tool actor (or a hostile one) could send them, each with the reason a
 * node refuses it with. Every value holds a token, so a test can check it is never quoted.
 */
import { bool, concat, hex, int, map, mapOf, str, type Bytes } from "../wire/msgpackBytes.ts";

export const TOKEN = "xoxb-1234567890-abcdefghijklmnopqrstu";

const reply = (value: Bytes): Bytes => map({ v: int(1), ok: bool(true), value });
const withToken = (value: Bytes): Bytes => map({ note: str(`the token is ${TOKEN}`), x: value });

const NOT_PLAIN = "not plain msgpack (PROTOCOL.md §4)";

/** 33 arrays, one in the other, around nil. */
const deep = concat(...Array.from({ length: 33 }, () => hex("91")), hex("c0"));

export interface BadReply {
  what: string;
  bytes: Bytes;
  /** The reason, whole, or a pattern for it. */
  reason: string | RegExp;
}

export const BAD_REPLIES: BadReply[] = [
  { what: "a timestamp extension (read as a Date)", bytes: reply(withToken(hex("d6 ff 00000000"))), reason: `${NOT_PLAIN}: reply.value.x holds extension type -1 (the timestamp extension); no extension types are allowed` },
  { what: "a fixext of type 0 (read as undefined)", bytes: reply(withToken(hex("d4 00 00"))), reason: `${NOT_PLAIN}: reply.value.x holds extension type 0 (msgpackr's undefined); no extension types are allowed` },
  { what: "an integer key (read as a string)", bytes: reply(mapOf([[str("note"), str(TOKEN)], [int(1), str("one")]])), reason: `${NOT_PLAIN}: a key of reply.value is an integer, not a string` },
  { what: "a string that is not UTF-8", bytes: reply(withToken(str(new Uint8Array([0xc3, 0x28])))), reason: `${NOT_PLAIN}: reply.value.x is not valid UTF-8` },
  { what: "a NaN", bytes: reply(withToken(hex("cb 7ff8000000000000"))), reason: `${NOT_PLAIN}: reply.value.x is not a finite number` },
  { what: "nesting deeper than 32", bytes: reply(withToken(deep)), reason: new RegExp(`^${NOT_PLAIN.replace(/[()§.]/g, "\\$&")}: reply\\.value\\.x(\\[0\\])+ is nested deeper than 32 levels$`) },
  { what: "bytes after the reply", bytes: concat(reply(str(`the token is ${TOKEN}`)), hex("c0")), reason: /^not msgpack: trailing bytes after the first value \(1 after offset \d+\)$/ },
  { what: "ok that is not a boolean", bytes: map({ v: int(1), ok: str("yes"), value: str(TOKEN) }), reason: "not a tool call reply: reply.ok: Invalid discriminator value. Expected 'true' | 'false'" },
  { what: "an error of an unknown kind", bytes: map({ v: int(1), ok: bool(false), error: map({ kind: str("boom"), message: str(TOKEN) }) }), reason: 'not a tool call reply: reply.error.kind: Invalid option: expected one of "input"|"error"|"timeout"|"malformed"' },
  { what: "a failure without its error", bytes: map({ v: int(1), ok: bool(false), message: str(TOKEN) }), reason: "not a tool call reply: reply.error: Invalid input: expected object, received undefined" },
  { what: "another version", bytes: map({ v: int(2), ok: bool(true), value: str(TOKEN) }), reason: "not a tool call reply: reply.v: Invalid input: expected 1" },
  { what: "not a map", bytes: str(TOKEN), reason: "not a tool call reply: a reply is a msgpack map" },
];
