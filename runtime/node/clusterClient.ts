/**
 * The client side of node control, for the CLI and for tests: find the nodes of a running
 * cluster by listening to their heartbeats (`ensoul.<cluster>.node.*.heartbeat`), find the
 * node hosting a soul, and send a node a control request.
 */
import { BusTimeoutError, NoRespondersError, type Bus } from "../bus/index.ts";
import { clusterSubjects, SUBJECT_ROOT } from "../bus/index.ts";
import { decodeControl, encodeControl, isControlError, type ControlVerb, type NodeStatus } from "./controlProtocol.ts";

export class ClusterClientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ClusterClientError";
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

/** The node hosting a soul, found by heartbeat; a clear error when no running node does. */
export async function findSoul(bus: Bus, soulId: string, waitMs = 2_500): Promise<DiscoveredNode> {
  const hosting = (nodes: ReadonlyMap<string, DiscoveredNode>) => [...nodes.values()].find((n) => n.status.souls.some((s) => s.id === soulId));
  const nodes = await discoverNodes(bus, { waitMs, until: (n) => hosting(n) !== undefined || sawFullPeriod(n) });
  const found = hosting(nodes);
  if (found) return found;
  if (nodes.size === 0) throw new ClusterClientError(`no node of cluster '${bus.cluster}' is running (no heartbeat within ${waitMs} ms)`);
  const souls = [...nodes.values()].flatMap((n) => n.status.souls.map((s) => s.id));
  throw new ClusterClientError(`unknown soul '${soulId}' (souls of cluster '${bus.cluster}': ${souls.join(", ") || "none"})`);
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
