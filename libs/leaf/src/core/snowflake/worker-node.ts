import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';

/** Data of a worker node: JSON `{ ip, port, timestamp, reservedUntil, horizon, run }`. */
export interface WorkerNodeData {
  readonly ip: string;
  readonly port: number;
  /** Local time of the write (Leaf's heartbeat field). */
  readonly timestamp: number;
  /**
   * The time lease: no ID of this worker has a later timestamp. Absent in nodes written by
   * the Java Leaf, which only wrote `timestamp`.
   */
  readonly reservedUntil?: number;
  /**
   * The last millisecond the writer may issue IDs in without writing this node again:
   * `reservedUntil`, or `timestamp + localRunwayMs` of the writer when it may extend its
   * lease in its local state file while ZooKeeper is unreachable. A successor that cannot
   * prove the writer has stopped waits past it (docs/design.md, "Snowflake safety").
   * Absent in nodes written by the Java Leaf and by versions before the horizon.
   */
  readonly horizon?: number;
  /** Random id of the run (process start) that wrote the node. */
  readonly run?: string;
  /**
   * Random nonce of the registration that created the node, present only until the first
   * lease write: it lets a registration recognise the node of its own create after the
   * answer was lost.
   */
  readonly registration?: string;
}

/** A child of `/snowflake/{name}/forever` parsed as `{ip}:{port}-{sequence}`. */
export interface WorkerNodeName {
  /** The child name. */
  readonly child: string;
  /** `ip:port`: everything before the last `-`. */
  readonly identity: string;
  /** The 10-digit sequence ZooKeeper appended. */
  readonly sequence: number;
}

const SEQUENCE = /^[0-9]{10}$/;

/** `/snowflake/{name}/forever`: the parent of the worker nodes of one namespace. */
export function workerNodeParent(name: string): string {
  return `/snowflake/${name}/forever`;
}

/**
 * Parses a child name. The sequence is read after the last `-`, so identities containing
 * `-` (host names) work. Returns `null` for names that are not worker nodes.
 */
export function parseWorkerNodeName(child: string): WorkerNodeName | null {
  const dash = child.lastIndexOf('-');
  if (dash <= 0) return null;
  const digits = child.slice(dash + 1);
  if (!SEQUENCE.test(digits)) return null;
  return { child, identity: child.slice(0, dash), sequence: Number(digits) };
}

/** The nodes of `identity` among `children`, lowest sequence first. */
export function workerNodesOf(children: readonly string[], identity: string): WorkerNodeName[] {
  return children
    .map(parseWorkerNodeName)
    .filter((node): node is WorkerNodeName => node !== null && node.identity === identity)
    .sort((a, b) => a.sequence - b.sequence);
}

/** Serialises node data as JSON. */
export function encodeWorkerNodeData(data: WorkerNodeData): Buffer {
  return Buffer.from(JSON.stringify(data), 'utf8');
}

/** A millisecond timestamp as the node and the state file record it: a safe integer ≥ 0. */
export const isTime = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * Parses node data. Accepts the Java Leaf's format too (`port` as a string, no `reservedUntil`).
 * @throws {WorkerStateCorruptError} when the data is not such a JSON object.
 */
export function decodeWorkerNodeData(path: string, data: Buffer): WorkerNodeData {
  const corrupt = (reason: string, cause?: unknown) =>
    new WorkerStateCorruptError(
      `ZooKeeper node ${path}`,
      reason,
      'Its time record is needed to know which timestamps this worker ID already used. ' +
        'If no instance runs with this ip:port, delete the node: the instance then registers a new worker ID. ' +
        'Otherwise write valid data { "ip", "port", "timestamp", "reservedUntil" } with a reservedUntil no earlier than the last ID issued.',
      { cause },
    );
  let raw: unknown;
  try {
    raw = JSON.parse(data.toString('utf8'));
  } catch (error) {
    throw corrupt('its data is not valid JSON', error);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw corrupt('its data is not a JSON object');
  const r = raw as Record<string, unknown>;
  const port = typeof r.port === 'string' ? Number(r.port) : r.port;
  if (typeof r.ip !== 'string' || !Number.isInteger(port)) throw corrupt('its data has no ip/port');
  if (!isTime(r.timestamp)) throw corrupt('its data has no timestamp');
  if (r.reservedUntil !== undefined && !isTime(r.reservedUntil))
    throw corrupt('its reservedUntil is not a timestamp');
  if (r.horizon !== undefined && !isTime(r.horizon))
    throw corrupt('its horizon is not a timestamp');
  if (r.run !== undefined && typeof r.run !== 'string') throw corrupt('its run is not a string');
  return {
    ip: r.ip,
    port: port as number,
    timestamp: r.timestamp,
    ...(r.reservedUntil !== undefined ? { reservedUntil: r.reservedUntil as number } : {}),
    ...(r.horizon !== undefined ? { horizon: r.horizon as number } : {}),
    ...(r.run !== undefined ? { run: r.run as string } : {}),
  };
}
