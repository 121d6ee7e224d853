/**
 * A running daimon beside one soul: the daimon machine wired to the bus. It listens with
 * core subscriptions on the soul's perceive and says subjects (only while its mode is on),
 * divines with its own persona and model or a remote daimon, and publishes what it divines
 * as envelopes: a whisper on the soul's whisper subject, and/or its own speech on the says
 * subject plus a perception, so bridges show it and the soul hears it.
 */
import { createActor, type ActorOptions } from "xstate";
import { currentCognition, type CognitionContext } from "../../runtime/cognition/index.ts";
import type { Bus, BusMessage, Subscription } from "../../runtime/bus/index.ts";
import { decodeEnvelope, encodeEnvelope, makeEnvelope, type Envelope } from "../../runtime/bus/index.ts";
import { clusterSubjects, type ClusterSubjects } from "../../runtime/bus/index.ts";
import { nextUlid } from "../../runtime/bus/index.ts";
import { componentLogger } from "../../runtime/log/index.ts";
import { PERSON_META_KEYS } from "../vocabulary/index.ts";
import { assertDaimonMode, speaksIn, whispersIn, type DaimonMode } from "./daimonMode.ts";
import {
  checkDaimonInput,
  createDaimonMachine,
  daimonPhase,
  type DaimonActor,
  type DaimonDelivery,
  type DaimonErrorPhase,
  type DaimonMachine,
  type DaimonObservation,
  type DaimonPhase,
  type ShouldDivine,
} from "./daimonMachine.ts";
import { personaDivination, type Divination } from "./divination.ts";

export interface DaimonConfig {
  /** Shown wherever the daimon is named: `Kothar whispers: ...`, the speech's `from`. */
  name: string;
  /** The daimon's soul.md. Required unless `divine` is given. */
  persona?: string;
  /** `provider:model` for its own divinations (Groq when configured, else the context default). */
  model?: string;
  mode: DaimonMode;
  /** Divine after this many exchanges. Default 3. */
  everyN?: number;
  /** Transcript lines kept. Default 12. */
  maxLines?: number;
  /** Decides when to divine instead of `everyN`. */
  shouldDivine?: ShouldDivine;
  /** Divines another way, e.g. `httpDaimon(...)` for an existing daimon service. */
  divine?: Divination;
}

export type DaimonFailurePhase = DaimonErrorPhase | "listening";

export interface StartDaimonOptions {
  bus: Bus;
  /** Defaults to the bus's own cluster. */
  cluster?: string;
  soulId: string;
  /** How the daimon names the soul in its prompts. */
  soulName: string;
  daimon: DaimonConfig;
  /** For its own divinations; defaults to the context startDaimon is called in (else the embedded default, offline without keys). */
  cognition?: CognitionContext;
  /** Failures of divination or delivery; the daimon keeps watching. Default: an error line in the runtime log. */
  onError?: (error: unknown, phase: DaimonFailurePhase) => void;
  /**
   * Whether the daimon attends to its soul now (default: always). A node under automatic
   * placement runs every soul's daimon that may come to it, and each attends only while the
   * node runs its soul, so a soul never gets one whisper per node.
   */
  attends?: () => boolean;
  inspect?: ActorOptions<DaimonMachine>["inspect"];
}

export interface DaimonHandle {
  readonly name: string;
  readonly soulId: string;
  /** The machine actor, for inspection. */
  readonly actor: DaimonActor;
  readonly mode: DaimonMode;
  phase(): DaimonPhase;
  /** How it divines: what `POST /api/whisper` asks when a bridge serves it for this daimon. */
  readonly divine: Divination;
  /** Switches mode at run time; `off` drops the subscriptions at once, any other mode restores them. */
  setMode(mode: DaimonMode): void;
  /** Unsubscribes and stops the machine; an in-flight divination is aborted. */
  stop(): Promise<void>;
}

const NAME_MAX = 128;

const defaultOnError = (error: unknown, phase: DaimonFailurePhase): void => {
  componentLogger("daimon").error(`${phase} failed: ${error instanceof Error ? error.message : String(error)}`);
};

function assertDaimonName(name: unknown): string {
  if (typeof name !== "string" || name.trim() === "" || name.length > NAME_MAX || /[\u0000-\u001F\u007F]/.test(name)) {
    throw new TypeError(`daimon name must be 1-${NAME_MAX} printable characters, got ${JSON.stringify(String(name).slice(0, 40))}`);
  }
  return name;
}

/** The bus side of the daimon: what it listens to and what it publishes. */
class DaimonWiring {
  readonly #bus: Bus;
  readonly #subjects: ClusterSubjects;
  readonly #soulId: string;
  readonly #address: string;

  constructor(bus: Bus, subjects: ClusterSubjects, soulId: string, address: string) {
    this.#bus = bus;
    this.#subjects = subjects;
    this.#soulId = soulId;
    this.#address = address;
  }

  listen(emit: (observation: DaimonObservation) => void): Subscription[] {
    const perceive = this.#bus.subscribe(this.#subjects.perceive(this.#soulId), (msg) => {
      const env = this.#read(msg);
      // The daimon's own words come back on this subject too (speak mode). A node refuses
      // `internal` here (only its internal subject carries the soul's own voice); a
      // perception claiming it is not conversation either way.
      if (env?.kind !== "perception" || env.from === this.#address || env.body.internal === true) return;
      const observation: DaimonObservation = { type: "OBSERVE_PERCEPTION", name: env.body.name, content: env.body.content, id: env.id };
      if (env.body.meta !== undefined) observation.meta = env.body.meta;
      emit(observation);
    });
    const says = this.#bus.subscribe(this.#subjects.says(this.#soulId), (msg) => {
      const env = this.#read(msg);
      // Streamed chunks repeat the final text; other voices on the subject (another daimon
      // speaking) are not the soul.
      if (env?.kind !== "speech" || !env.body.final || env.from !== this.#soulId) return;
      emit({ type: "OBSERVE_SPEECH", content: env.body.text });
    });
    return [perceive, says];
  }

  /**
   * Invalid envelopes are ignored, not dead-lettered: the daimon only overhears these
   * subjects, and their owner (the node hosting the soul) already reports bad input.
   */
  #read(msg: BusMessage): Envelope | undefined {
    const decoded = decodeEnvelope(msg.data);
    return decoded.ok ? decoded.envelope : undefined;
  }

  async deliver(delivery: DaimonDelivery): Promise<void> {
    const causation = delivery.replyTo?.id;
    const opts = causation !== undefined ? { causation } : {};
    const publishing: Promise<void>[] = [];
    if (whispersIn(delivery.mode)) {
      const whisper = makeEnvelope("whisper", this.#address, this.#soulId, { content: delivery.intuition, source: delivery.daimonName }, opts);
      publishing.push(this.#bus.publish(this.#subjects.whisper(this.#soulId), encodeEnvelope(whisper)));
    }
    if (speaksIn(delivery.mode)) {
      // Speech for the bridges to show under the daimon's name...
      const id = nextUlid();
      const speech = makeEnvelope(
        "speech",
        this.#address,
        this.#soulId,
        { proposalId: `daimon-${id}`, text: delivery.intuition, final: true },
        { ...opts, id: `daimon-${id}` },
      );
      publishing.push(this.#bus.publish(this.#subjects.says(this.#soulId), encodeEnvelope(speech), { msgId: speech.id }));
      // ...and a perception, so the soul hears the daimon speak, in the same place (meta).
      const meta = placeOf(delivery.replyTo?.meta);
      const perception = makeEnvelope(
        "perception",
        this.#address,
        this.#soulId,
        { action: "said", content: delivery.intuition, name: delivery.daimonName, ...(meta !== undefined ? { meta } : {}) },
        opts,
      );
      publishing.push(this.#bus.publish(this.#subjects.perceive(this.#soulId), encodeEnvelope(perception), { msgId: perception.id }));
    }
    await Promise.all(publishing);
  }
}

/**
 * Where the person spoke (channel, thread...), without who they are: the daimon's words go
 * to the same place but are the daimon's, so they must not be filed under the person's id.
 */
function placeOf(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (meta === undefined) return undefined;
  const place = { ...meta };
  for (const key of PERSON_META_KEYS) delete place[key];
  return Object.keys(place).length > 0 ? place : undefined;
}

/** Starts a daimon beside a soul. With mode `off` it holds no subscription until switched on. */
export function startDaimon(options: StartDaimonOptions): DaimonHandle {
  const { bus, soulId, soulName, daimon } = options;
  const name = assertDaimonName(daimon.name);
  const subjects = clusterSubjects(options.cluster ?? bus.cluster);
  subjects.perceive(soulId); // checks the soul id now, not at the first subscription
  const mode = assertDaimonMode(daimon.mode);
  const onError = options.onError ?? defaultOnError;

  let divine = daimon.divine;
  if (!divine) {
    if (typeof daimon.persona !== "string" || daimon.persona.trim() === "") {
      throw new TypeError(`daimon '${name}' needs a persona (its soul.md) or a divine function`);
    }
    divine = personaDivination({
      persona: daimon.persona,
      ...(daimon.model !== undefined ? { model: daimon.model } : {}),
      // Captured here, not per divination: divinations run from bus handlers, and on the
      // in-process bus those can carry the async context of the soul's turn (its abort
      // signal, its blueprint's models).
      cognition: options.cognition ?? currentCognition(),
    });
  }

  const wiring = new DaimonWiring(bus, subjects, soulId, name);
  const machine = createDaimonMachine({
    divine,
    deliver: (delivery) => wiring.deliver(delivery),
    observe: (emit) => {
      let subs: Subscription[] = [];
      try {
        const attends = options.attends;
        subs = wiring.listen(attends ? (observation) => void (attends() && emit(observation)) : emit);
      } catch (error) {
        // A closed or draining bus: nothing to listen to, and nothing to crash over.
        onError(error, "listening");
      }
      return () => {
        for (const sub of subs) sub.unsubscribe();
      };
    },
    onError,
    ...(daimon.shouldDivine ? { shouldDivine: daimon.shouldDivine } : {}),
  });

  const input = checkDaimonInput({
    soulName,
    daimonName: name,
    mode,
    ...(daimon.everyN !== undefined ? { everyN: daimon.everyN } : {}),
    ...(daimon.maxLines !== undefined ? { maxLines: daimon.maxLines } : {}),
  });
  const actor = createActor(machine, { input, id: `daimon-${soulId}`, ...(options.inspect ? { inspect: options.inspect } : {}) });
  actor.start();

  return {
    name,
    soulId,
    actor,
    divine,
    get mode() {
      return actor.getSnapshot().context.mode;
    },
    phase: () => daimonPhase(actor.getSnapshot()),
    setMode(next) {
      const checked = assertDaimonMode(next);
      if (actor.getSnapshot().status !== "active") throw new Error(`daimon '${name}' of soul '${soulId}' is stopped`);
      actor.send({ type: "SET_MODE", mode: checked });
    },
    async stop() {
      if (actor.getSnapshot().status === "active") actor.send({ type: "STOP" });
      actor.stop();
    },
  };
}
