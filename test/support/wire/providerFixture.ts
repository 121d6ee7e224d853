/**
 * Setup the provider tests share: a scripted server for the whole test file with a fresh
 * model pointed at it before each test, and `failure` for a call that must reject.
 */
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { LanguageModel } from "../../../runtime/providers/LanguageModel.ts";
import { ProviderError } from "../../../runtime/providers/ProviderError.ts";
import type { ScriptedServer } from "./scriptedServer.ts";

export interface ModelOverWire {
  /** The file's server, reset before each test. */
  readonly server: ScriptedServer;
  /** A model made by `create` against the server before each test. */
  readonly model: LanguageModel;
}

/**
 * Starts the server before all tests of the file and closes it after them; before each test
 * it resets the server and makes a new model with the server's URL as its base URL.
 */
export function modelOverWire(start: () => Promise<ScriptedServer>, create: (baseURL: string) => LanguageModel): ModelOverWire {
  let server: ScriptedServer | undefined;
  let model: LanguageModel | undefined;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    server!.reset();
    model = create(server!.url);
  });
  return {
    get server() {
      if (!server) throw new Error("the scripted server is not started yet (use it inside a test)");
      return server;
    },
    get model() {
      if (!model) throw new Error("the model is made before each test (use it inside a test)");
      return model;
    },
  };
}

/** The error `p` rejects with, asserted to be a `type` (a ProviderError unless told). */
export async function failure<E extends Error = ProviderError>(
  p: Promise<unknown>,
  type: abstract new (...a: never[]) => E = ProviderError as never,
): Promise<E> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}
