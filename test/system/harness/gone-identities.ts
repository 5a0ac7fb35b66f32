/**
 * A ZooKeeper namespace whose worker IDs were all used by instances that are long gone
 * (docs/reliability.md, "Worker-ID reclaim"): one persistent sequential worker node per
 * sequence of the worker field under `/snowflake/{name}/forever`, no liveness node, every
 * lease an hour old. Every other node is in the Java Leaf's format (its
 * `SnowflakeZookeeperHolder`: `{ip}:{port}-{sequence}` with JSON `{"ip","port","timestamp"}`,
 * the port a string); the others as this application writes them (`reservedUntil`,
 * `horizon`, `run`). The horizons alternate between the two formats in age order, so the
 * first instances to reclaim take over nodes of both.
 */
import { randomBytes } from 'node:crypto';
import type { ZkClient } from 'nestjs-leaf/ports';

/** How the Java Leaf extends its node: a heartbeat every 3 s (its lease, as this reads it). */
const JAVA_HEARTBEAT_MS = 3000;
/** The application's default time lease and local runway. */
const APP_LEASE_MS = 10_000;
const APP_RUNWAY_MS = 60_000;

/** One seeded worker node. */
export interface GoneIdentity {
  /** Its sequence: the worker ID. */
  readonly sequence: number;
  /** `ip:port` of the instance that is gone. */
  readonly identity: string;
  /** `java`: written by the Java Leaf; `app`: by this application. */
  readonly format: 'java' | 'app';
  /** The last millisecond its holder may have issued in. */
  readonly horizon: number;
}

/** Settings of {@link seedGoneIdentities}. */
export interface SeedOptions {
  /** Worker nodes to create: sequences `0 .. count - 1` of a fresh namespace. */
  readonly count: number;
  /** How long ago the oldest horizon was. @default 3_600_000 (an hour) */
  readonly ageMs?: number;
}

/**
 * Fills `/snowflake/{name}/forever` of a namespace that does not exist yet; see the file.
 * The creates run in parallel (ZooKeeper hands out the sequences in the order it applies
 * them), so which identity got which sequence is read back from the names.
 * @throws when the namespace already has worker nodes (the sequences would not start at 0).
 */
export async function seedGoneIdentities(
  zk: ZkClient,
  name: string,
  options: SeedOptions,
): Promise<GoneIdentity[]> {
  const parent = `/snowflake/${name}/forever`;
  await zk.mkdirp(parent);
  if ((await zk.getChildren(parent)).length > 0)
    throw new Error(`${parent} already has worker nodes`);
  const oldest = Date.now() - (options.ageMs ?? 3_600_000);
  const planned = Array.from({ length: options.count }, (_, i) => {
    const format: GoneIdentity['format'] = i % 2 === 0 ? 'java' : 'app';
    const ip = `10.${format === 'java' ? 7 : 8}.${i >> 8}.${i & 255}`;
    const port = 8080;
    // 10 ms apart, in index order: the order a reclaim scan prefers (oldest horizon first).
    const horizon = oldest + i * 10;
    const data =
      format === 'java'
        ? { ip, port: String(port), timestamp: horizon - JAVA_HEARTBEAT_MS }
        : {
            ip,
            port,
            timestamp: horizon - APP_RUNWAY_MS,
            reservedUntil: horizon - APP_RUNWAY_MS + APP_LEASE_MS,
            horizon,
            run: randomBytes(8).toString('hex'),
          };
    return { identity: `${ip}:${port}`, format, horizon, data };
  });
  const seeded: GoneIdentity[] = [];
  for (let i = 0; i < planned.length; i += 256) {
    const batch = planned.slice(i, i + 256);
    const paths = await Promise.all(
      batch.map((node) =>
        zk.createPersistentSequential(
          `${parent}/${node.identity}-`,
          Buffer.from(JSON.stringify(node.data), 'utf8'),
        ),
      ),
    );
    batch.forEach((node, k) =>
      seeded.push({
        sequence: Number(paths[k]!.slice(paths[k]!.lastIndexOf('-') + 1)),
        identity: node.identity,
        format: node.format,
        horizon: node.horizon,
      }),
    );
  }
  const sequences = new Set(seeded.map((node) => node.sequence));
  if (sequences.size !== options.count || Math.max(...sequences) !== options.count - 1)
    throw new Error(`${parent}: the sequences are not 0..${options.count - 1}`);
  return seeded.sort((a, b) => a.sequence - b.sequence);
}
