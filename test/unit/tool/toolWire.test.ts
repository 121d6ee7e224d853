/**
 * Tool call bodies are checked on the bytes by PROTOCOL.md §4's one checker, as envelopes
 * are (runtime/bus plainMsgpack.ts), then for their fields (§14): a reply a node refuses is
 * refused with the rule it breaks, naming the field, and quoting nothing of what it holds.
 */
import { Packr } from "msgpackr";
import { describe, expect, it } from "vitest";
import { decodeToolReply, decodeToolRequest, encodeToolBody } from "../../../actors/tool/index.ts";
import { redactedHead } from "../../../actors/tool/toolWire.ts";
import { BAD_REPLIES, TOKEN } from "../../support/tool/badToolReplies.ts";
import { map, hex, int, str } from "../../support/wire/msgpackBytes.ts";

describe("a tool call reply", () => {
  it.each(BAD_REPLIES)("with $what is refused with the rule it breaks, quoting none of it", ({ bytes, reason }) => {
    const decoded = decodeToolReply(bytes);
    expect(decoded.ok).toBe(false);
    const why = (decoded as { reason: string }).reason;
    if (typeof reason === "string") expect(why).toBe(reason);
    else expect(why).toMatch(reason);
    expect(why).not.toContain(TOKEN.slice(0, 12));
  });

  it("that is plain is read as it is; one without its value names the field", () => {
    expect(decodeToolReply(encodeToolBody({ v: 1, ok: true, value: { at: "2026-01-01", n: [1, 2.5, null] } }))).toEqual({ ok: true, reply: { v: 1, ok: true, value: { at: "2026-01-01", n: [1, 2.5, null] } } });
    expect(decodeToolReply(new Packr({ useRecords: false }).pack({ v: 1, ok: true }))).toEqual({ ok: false, reason: "not a tool call reply: reply.value: missing (nil stands for no value)" });
    expect(decodeToolReply(new Packr({ useRecords: false }).pack({ v: 1, ok: true, value: null }))).toEqual({ ok: true, reply: { v: 1, ok: true, value: null } });
    expect(decodeToolReply(encodeToolBody({ v: 1, ok: false, error: { kind: "input", message: "bad" } }))).toMatchObject({ ok: true, reply: { ok: false } });
  });
});

describe("a tool call request", () => {
  it("is checked by the same rules", () => {
    const request = map({ v: int(1), callId: str("c"), soulId: str("s"), tool: str("t"), input: hex("d6 ff 00000000"), timeoutMs: int(100) });
    expect(decodeToolRequest(request)).toEqual({ ok: false, reason: "not plain msgpack (PROTOCOL.md §4): request.input holds extension type -1 (the timestamp extension); no extension types are allowed" });
    expect(decodeToolRequest(map({ v: int(1), callId: str("c") }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^not a tool call request: request\.soulId: /) });
  });
});

describe("the head of a refused reply", () => {
  it("is short, shows the shape of the bytes, and hides credentials and anything that could be one", () => {
    const bytes = new Packr({ useRecords: false }).pack({ v: 1, ok: true, value: `token ${TOKEN} and password=hunter2hunter2` });
    const head = redactedHead(bytes);
    expect(head.length).toBeLessThanOrEqual(48);
    expect(head).toContain("··v··ok··value·");
    expect(head).not.toContain("xoxb-12");
    expect(redactedHead(new Packr({ useRecords: false }).pack({ v: 1, ok: true, value: "AKIAABCDEFGHIJKLMNOP" }))).not.toContain("AKIA");
  });
});
