/**
 * The client side of node control, for the CLI and for tests: find the nodes of a running
 * cluster by listening to their heartbeats (`ensoul.<cluster>.node.*.heartbeat`), find the
 * node hosting a soul, list a node's souls, and send a node a control request.
 */
import { BusTimeoutError, NoRespondersError, type Bus } from "../bus/index.ts";
import { clusterSubjects, SUBJECT_ROOT } from "../bus/index.ts";
import { decodeControl, encodeControl, isControlError, type ControlVerb, type NodeStatus, type SoulStatusEntry } from "./controlProtocol.ts";

export class ClusterClientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ClusterClientError";
  }
}

/**
 * The soul's node is not running, or no node of the cluster is: a perception published now
 * waits in the cluster's stream and is answered when the node is back.
 */
export class NodeDownError extends ClusterClientError {
  readonly soulId: string;
  /** The node the config places the soul on, when a live node's heartbeat said so. */
  readonly node: string | undefined;
  constructor(message: string, soulId: string, node?: string) {
    super(message);
    this.name = "NodeDownError";
    this.soulId = soulId;
    this.node = node;
  }
}

export interface DiscoveredNode {
  status: NodeStatus;
  /** Epoch ms of the latest heartbeat. */
  seenAt: number;
  /** Heartbeats heard from it while listening. */
  beats: number;
}

export interface DiscoverOptions {
  /** The longest to listen (default 2,500 ms: two and a half heartbeats at the default period). */
  waitMs?: number;
  /**
   * Stop listening as soon as this returns true. By default: once every node heard has beaten
   * twice, i.e. a whole heartbeat period has gone by (the nodes of a cluster share one period).
   */
  until?: (nodes: ReadonlyMap<string, DiscoveredNode>) => boolean;
  /** Stop listening when it aborts (what was heard is returned). */
  signal?: AbortSignal;
}

/** Every node heard has beaten at least twice: a full period went by, so nobody was missed. */
export const sawFullPeriod = (nodes: ReadonlyMap<string, DiscoveredNode>): boolean => nodes.size > 0 && [...nodes.values()].every((n) => n.beats >= 2);

/** The nodes whose heartbeat arrived while listening, by node id. Stopped nodes are left out. */
export async function discoverNodes(bus: Bus, options: DiscoverOptions = {}): Promise<Map<string, DiscoveredNode>> {
  const nodes = new Map<string, DiscoveredNode>();
  const waitMs = options.waitMs ?? 2_500;
  const until = options.until ?? sawFullPeriod;
  const subject = `${SUBJECT_ROOT}.${bus.cluster}.node.*.heartbeat`;
  await new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sub.unsubscribe();
      resolve();
    };
    const timer = setTimeout(finish, waitMs);
    options.signal?.addEventListener("abort", finish, { once: true });
    const sub = bus.subscribe(subject, (msg) => {
      const status = decodeControl<NodeStatus>(msg.data);
      if (isControlError(status) || typeof status.node !== "string" || !Array.isArray(status.souls)) return;
      if (status.state === "stopped") nodes.delete(status.node);
      else nodes.set(status.node, { status, seenAt: Date.now(), beats: (nodes.get(status.node)?.beats ?? 0) + 1 });
      if (until(nodes)) finish();
    });
  });
  return nodes;
}

/**
 * The node hosting a soul, found by heartbeat. A node whose heartbeat could not list all its
 * souls (`soulsPartial`, a node of many souls) is asked with `status { soulIds }` as soon as it
 * is heard. When none does: a NodeDownError if no node runs, or if a live node's heartbeat
 * places the soul on a node that sent none; otherwise the soul is unknown (a
 * ClusterClientError naming some of the souls there are).
 */
export async function findSoul(bus: Bus, soulId: string, waitMs = 2_500): Promise<DiscoveredNode> {
  const hosting = (nodes: ReadonlyMap<string, DiscoveredNode>) => [...nodes.values()].find((n) => n.status.souls.some((s) => s.id === soulId));
  const asks = new Map<string, Promise<DiscoveredNode | undefined>>();
  const stop = new AbortController();
  const ask = (n: DiscoveredNode) => {
    if (asks.has(n.status.node)) return;
    asks.set(n.status.node, askForSoul(bus, n, soulId, Math.min(waitMs, 2_000)).then((found) => (found && stop.abort(), found)));
  };
  const until = (nodes: ReadonlyMap<string, DiscoveredNode>) => {
    for (const n of nodes.values()) if (n.status.soulsPartial) ask(n);
    return hosting(nodes) !== undefined || sawFullPeriod(nodes);
  };
  const nodes = await discoverNodes(bus, { waitMs, until, signal: stop.signal });
  const found = hosting(nodes) ?? (await Promise.all(asks.values())).find((n) => n !== undefined);
  if (found) return found;
  const silence = `no heartbeat within ${waitMs} ms`;
  if (nodes.size === 0) throw new NodeDownError(`no node of cluster '${bus.cluster}' is running (${silence})`, soulId);
  const placed = [...nodes.values()].flatMap((n) => Object.entries(n.status.elsewhere ?? {})).find(([node, souls]) => souls.includes(soulId) && !nodes.has(node));
  if (placed) throw new NodeDownError(`soul '${soulId}' is on node '${placed[0]}' of cluster '${bus.cluster}', which is not running (${silence})`, soulId, placed[0]);
  const souls = [...nodes.values()].flatMap((n) => n.status.souls.map((s) => s.id));
  const count = [...nodes.values()].reduce((total, n) => total + (n.status.soulCount ?? n.status.souls.length), 0);
  const named = souls.length > 20 ? `${souls.slice(0, 20).join(", ")} and ${count - 20} more` : souls.join(", ") || "none";
  throw new ClusterClientError(`unknown soul '${soulId}' (souls of cluster '${bus.cluster}': ${named})`);
}

/** The node, with a status naming the soul, if its `status { soulIds }` lists it; a node that does not answer does not host it as far as the caller can tell. */
async function askForSoul(bus: Bus, n: DiscoveredNode, soulId: string, timeoutMs: number): Promise<DiscoveredNode | undefined> {
  const status = await requestControl<NodeStatus>(bus, n.status.node, "status", { soulIds: [soulId] }, timeoutMs).catch(() => undefined);
  return status && Array.isArray(status.souls) && status.souls.some((s) => s.id === soulId) ? { ...n, status } : undefined;
}

/**
 * Every soul entry of a node: its status's `souls` when complete, else paged with
 * `status { after, limit }` until the last page (`ensoul status` lists them all).
 */
export async function nodeSouls(bus: Bus, status: NodeStatus, pageSize = 5_000, timeoutMs = 5_000): Promise<SoulStatusEntry[]> {
  if (!status.soulsPartial) return status.souls;
  const souls: SoulStatusEntry[] = [];
  let after: string | undefined;
  do {
    const page: NodeStatus = await requestControl<NodeStatus>(bus, status.node, "status", { limit: pageSize, ...(after !== undefined ? { after } : {}) }, timeoutMs);
    souls.push(...page.souls);
    after = page.next;
  } while (after !== undefined);
  return souls;
}

/** A control request to one node; the reply body, or a ClusterClientError with the node's own error. */
export async function requestControl<T extends object>(bus: Bus, nodeId: string, verb: ControlVerb, body: object = {}, timeoutMs = 5_000): Promise<T> {
  const subject = clusterSubjects(bus.cluster).node(nodeId, verb);
  let reply: Uint8Array;
  try {
    reply = await bus.request(subject, encodeControl(body), { timeoutMs });
  } catch (err) {
    if (err instanceof NoRespondersError) throw new ClusterClientError(`node '${nodeId}' of cluster '${bus.cluster}' is not running`);
    if (err instanceof BusTimeoutError) throw new ClusterClientError(`node '${nodeId}' did not answer '${verb}' within ${timeoutMs} ms`);
    throw err;
  }
  const decoded = decodeControl<T>(reply);
  if (isControlError(decoded)) throw new ClusterClientError(decoded.error);
  return decoded;
}
