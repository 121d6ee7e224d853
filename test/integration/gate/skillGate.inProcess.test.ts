import { describe } from "vitest";
import { createInProcessBus } from "../../../runtime/bus/index.ts";
import { skillGateSuite } from "./skillGateSuite.ts";

describe("skill-gate actors on the in-process bus", () => {
  skillGateSuite(async (cluster) => {
    // One process, one bus: the actors and the chain share it, as on an embedded node.
    const bus = createInProcessBus({ cluster });
    return { server: bus, client: bus };
  });
});
