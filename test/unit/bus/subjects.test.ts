import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assertName, clusterSubjects, InvalidNameError, parseSubject, soulOfSubject, streamName, streamSubjects } from "../../../runtime/bus/index.ts";
import { subjectContains, subjectMatches } from "../../../runtime/bus/subjectMatch.ts";

describe("subject builders", () => {
  const s = clusterSubjects("prod-1");

  it("builds every subject of the namespace", () => {
    expect(s.perceive("samantha")).toBe("ensoul.prod-1.soul.samantha.perceive");
    expect(s.whisper("samantha")).toBe("ensoul.prod-1.soul.samantha.whisper");
    expect(s.says("samantha")).toBe("ensoul.prod-1.soul.samantha.says");
    expect(s.events("samantha")).toBe("ensoul.prod-1.soul.samantha.events");
    expect(s.soul("a_b", "says")).toBe("ensoul.prod-1.soul.a_b.says");
    expect(s.allSouls("perceive")).toBe("ensoul.prod-1.soul.*.perceive");
    expect(s.gateVerify("no-secrets")).toBe("ensoul.prod-1.gate.no-secrets.verify");
    expect(s.node("node-7", "status")).toBe("ensoul.prod-1.node.node-7.status");
    expect(s.nodeControl("node-7")).toBe("ensoul.prod-1.node.node-7.>");
    expect(s.dead).toBe("ensoul.prod-1.dead");
    expect(s.streamName).toBe("ENSOUL_prod-1");
    expect(streamName("x")).toBe("ENSOUL_x");
    expect(s.internal("samantha")).toBe("ensoul.prod-1.soul.samantha.internal");
    expect(streamSubjects("x")).toEqual(["ensoul.x.soul.*.perceive", "ensoul.x.soul.*.says", "ensoul.x.soul.*.internal"]);
  });

  const attacks: unknown[] = [
    "",
    "a.b",
    "*",
    ">",
    "a*",
    "a>",
    "a b",
    " a",
    "a\tb",
    "a\nb",
    "a\r\nPUB x 1",
    "a\u0000",
    "../etc",
    "sam/antha",
    "é",
    "samantha.>",
    "x".repeat(129),
    5,
    null,
    undefined,
    {},
  ];

  it.each(attacks.map((a) => [JSON.stringify(a) ?? String(a), a]))("rejects the name %s wherever a name goes", (_label, bad) => {
    const asString = bad as string;
    expect(() => clusterSubjects(asString)).toThrow(InvalidNameError);
    expect(() => s.perceive(asString)).toThrow(InvalidNameError);
    expect(() => s.gateVerify(asString)).toThrow(InvalidNameError);
    expect(() => s.node(asString, "status")).toThrow(InvalidNameError);
    expect(() => s.node("n1", asString)).toThrow(InvalidNameError);
  });

  it("says which field was bad, with its value, in the error", () => {
    const err = (() => {
      try {
        s.perceive("bob.*");
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(InvalidNameError);
    expect((err as InvalidNameError).field).toBe("soulId");
    expect((err as InvalidNameError).value).toBe("bob.*");
    expect((err as Error).message).toBe('invalid soulId "bob.*": may contain only A-Z a-z 0-9 _ - (found ".")');
    expect(() => s.gateVerify("")).toThrow('invalid skill "": must not be empty');
    expect(() => clusterSubjects("x".repeat(129))).toThrow(/invalid cluster .*at most 128 characters, got 129/);
    expect(() => s.soul("a", "shout" as "says")).toThrow(/soul verb/);
  });

  it("accepts exactly the token alphabet up to 128 characters", () => {
    expect(assertName("soulId", "A-z_0-9")).toBe("A-z_0-9");
    expect(assertName("soulId", "x".repeat(128))).toHaveLength(128);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (name) => {
        const ok = /^[A-Za-z0-9_-]+$/.test(name);
        let threw = false;
        try {
          const subject = s.perceive(name);
          expect(subject.split(".")).toHaveLength(5); // a name can never add a token
        } catch (e) {
          threw = e instanceof InvalidNameError;
        }
        return ok !== threw;
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseSubject", () => {
  const s = clusterSubjects("c1");

  it("reads built subjects back", () => {
    expect(parseSubject(s.perceive("ann"))).toEqual({ cluster: "c1", kind: "soul", id: "ann", verb: "perceive" });
    expect(parseSubject(s.events("ann"))).toEqual({ cluster: "c1", kind: "soul", id: "ann", verb: "events" });
    expect(parseSubject(s.gateVerify("tone"))).toEqual({ cluster: "c1", kind: "gate", id: "tone", verb: "verify" });
    expect(parseSubject(s.node("n1", "activate"))).toEqual({ cluster: "c1", kind: "node", id: "n1", verb: "activate" });
    expect(parseSubject(s.dead)).toEqual({ cluster: "c1", kind: "dead", id: null, verb: null });
  });

  it.each([
    "",
    "ensoul",
    "ensoul.c1",
    "other.c1.soul.ann.perceive",
    "ensoul.c1.soul.ann.shout",
    "ensoul.c1.soul.*.perceive",
    "ensoul.c1.soul.ann.perceive.extra",
    "ensoul.c1.gate.tone.approve",
    "ensoul.c1.node.n1.>",
    "ensoul.c1.dead.more",
    "ensoul.c 1.dead",
    "ensoul..soul.ann.perceive",
  ])("returns null for %j", (subject) => {
    expect(parseSubject(subject)).toBeNull();
  });
});

describe("subject matching (NATS rules)", () => {
  it.each([
    ["a.b.c", "a.b.c", true],
    ["a.*.c", "a.b.c", true],
    ["a.*.c", "a.b.x.c", false],
    ["a.*", "a", false],
    ["a.>", "a.b", true],
    ["a.>", "a.b.c.d", true],
    ["a.>", "a", false],
    [">", "a", true],
    ["*.*", "a.b", true],
    ["*.*", "a.b.c", false],
    ["a.b", "a.b.c", false],
  ] as const)("%s matches %s: %s", (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });

  it.each([
    ["ensoul.c.soul.*.perceive", "ensoul.c.soul.ann.perceive", true],
    ["ensoul.c.soul.*.perceive", "ensoul.c.soul.*.perceive", true],
    ["ensoul.c.soul.*.perceive", "ensoul.c.soul.>", false],
    ["ensoul.c.soul.*.perceive", "ensoul.c.soul.*.*", false],
    ["ensoul.c.>", "ensoul.c.soul.*.says", true],
  ] as const)("%s contains %s: %s", (outer, inner, expected) => {
    expect(subjectContains(outer, inner)).toBe(expected);
  });
});

describe("the soul a received subject names", () => {
  it("is the soul token when it is a name", () => {
    expect(soulOfSubject("ensoul.c.soul.samantha.whisper")).toEqual({ id: "samantha" });
  });

  it.each([">", "*", "b@d", "é", "a b"])("is no soul, with the reason, for the token %j", (token) => {
    const named = soulOfSubject(`ensoul.c.soul.${token}.perceive`);
    expect(named).toEqual({ reason: expect.stringMatching(/^no soul: invalid soulId ".+": may contain only A-Z a-z 0-9 _ - \(found ".+"\)$/) });
  });
});
