import { describe } from "vitest";
import { createInProcessBus } from "../../../runtime/bus/index.ts";
import { busContract } from "./busContract.ts";

describe("Bus contract: in-process bus", () => {
  busContract(async (cluster, onHandlerError) => createInProcessBus({ cluster, onHandlerError }));
});
