/**
 * `souls[].budget` in the cluster config: checked with the rest of the config, so a mistake
 * is one line naming the field before anything runs.
 */
import { describe, expect, it } from "vitest";
import { parseClusterConfig } from "../../../runtime/node/index.ts";

const soul = (budget: unknown) => ({ souls: [{ id: "sam", blueprint: "samantha", budget }] });

describe("a soul's budget in the config", () => {
  it("takes tokens and calls per hour and per day, stopping autonomous work by default", () => {
    const config = parseClusterConfig(soul({ hour: { calls: 60 }, day: { tokens: 200_000, calls: 500 } }));
    expect(config.souls[0].budget).toEqual({ hour: { calls: 60 }, day: { tokens: 200_000, calls: 500 }, stops: "autonomous" });
    expect(parseClusterConfig(soul({ day: { calls: 1 }, stops: "all" })).souls[0].budget?.stops).toBe("all");
  });

  it("names the field of a mistake", () => {
    expect(() => parseClusterConfig(soul({}), "ensoul.yaml")).toThrow("ensoul.yaml: souls[0].budget: give an hour or a day budget (or both)");
    expect(() => parseClusterConfig(soul({ hour: {} }), "ensoul.yaml")).toThrow("ensoul.yaml: souls[0].budget.hour: give tokens, calls or both");
    expect(() => parseClusterConfig(soul({ hour: { calls: 0 } }), "ensoul.yaml")).toThrow(/^ensoul\.yaml: souls\[0\]\.budget\.hour\.calls: /);
    expect(() => parseClusterConfig(soul({ week: { calls: 1 } }), "ensoul.yaml")).toThrow("ensoul.yaml: souls[0].budget.week: unknown field");
    expect(() => parseClusterConfig(soul({ hour: { calls: 1 }, stops: "some" }), "ensoul.yaml")).toThrow(/^ensoul\.yaml: souls\[0\]\.budget\.stops: /);
  });
});
