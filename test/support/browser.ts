/**
 * Headless Chromium for the browser tests and benchmarks of the debugger page, through
 * playwright-core and the system's Chromium at /usr/bin/chromium (`apt-get install -y
 * chromium`). Without it a test file is skipped on a developer's machine with a warning that
 * says how to install it, and fails in CI (any non-empty CI): a missing browser must not turn
 * a CI run green. A benchmark prints a row saying it was skipped instead.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { inCi } from "./ci/inCi.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumMissing = !existsSync(CHROMIUM);
export const INSTALL_CHROMIUM = `no Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\``;

/**
 * Whether the browser tests of `file` are to be skipped (Chromium missing, not in CI); says
 * so once, with how to install it. In CI they run, and fail in launchChromium().
 */
export function skipWithoutChromium(file: string): boolean {
  const skip = chromiumMissing && !inCi();
  if (skip) console.warn(`${file} skipped: ${INSTALL_CHROMIUM}`);
  return skip;
}

/** Starts headless Chromium; throws, saying how to install it, when it is missing. */
export function launchChromium(): Promise<Browser> {
  if (chromiumMissing) return Promise.reject(new Error(inCi() ? `CI is set and ${INSTALL_CHROMIUM}` : INSTALL_CHROMIUM));
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}
