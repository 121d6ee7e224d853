/**
 * Claudius's memory integration. The pipeline assembles its own prompt (persona on the first
 * turn, then kept as the thread's context; the message fenced as untrusted input) and records
 * the message in memory itself, so the integrator adds nothing for the pipeline processes:
 * Open Souls' default (persona as the `core` region, the perception as a line of
 * conversation) would put the persona and the message into every prompt twice.
 *
 * The ISM phase is normally entered from `main` within the same turn, after the pipeline has
 * recorded the message. If a turn ever starts in it (a soul restored there), the message goes
 * in as Open Souls does it, so the ISM's steps see what they are working on.
 */
import { perceptionMemory, type MemoryIntegrator } from "../../actors/soul/index.ts";
import { PROBLEM_SOLVING } from "./modes.ts";

export const claudiusMemoryIntegrator: MemoryIntegrator = ({ perception, workingMemory, currentProcess }) =>
  currentProcess === PROBLEM_SOLVING ? workingMemory.withMemory(perceptionMemory(perception)) : workingMemory;
