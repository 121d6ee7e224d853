#!/usr/bin/env node
// ensoul is written in TypeScript and run from source: tsx compiles it on load, so the
// command works from a fresh clone with no build step.
import { register } from "tsx/esm/api";

register();
await import("../runtime/cli/main.ts");
