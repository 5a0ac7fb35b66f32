import type { DataSource } from 'typeorm';
import type { LeafAllocStore } from '../core/segment/leaf-alloc-store.port';
import type { OneAllocation } from './leaf-options.interface';

/** The ZooKeeper of the sequence issuer election (`sequence.zookeeper`). */
export interface LeafSequenceZookeeperOptions {
  /** Connect string, e.g. `127.0.0.1:2181,10.0.0.2:2181` (may be snowflake's). */
  connect: string;
  /**
   * Requested session timeout: a crashed issuer is replaced about this long after its last
   * heartbeat.
   * @default 10000
   */
  sessionTimeoutMs?: number;
}

/** The database-held issuer election (`sequence.database`; docs/design.md, "Sequence mode on the database"). */
export interface LeafSequenceDatabaseOptions {
  /**
   * How long a claim or renewal of a group's issuer row holds (`expires_at`, the database's
   * clock): a killed issuer is replaced about this long after its last renewal.
   * @default 10000
   */
  leaseMs?: number;
}

/** Options of sequence mode (docs/design.md, "Sequence mode"). */
export interface LeafSequenceOptions {
  /** @default true */
  enabled?: boolean;
  /**
   * The one database sequence mode takes its ranges (`leaf_alloc`) from, business numbers
   * their formats, and the `database` election its rows: a TypeORM `DataSource` (the caller
   * owns it), or `store`. Required with segment mode off; with it on, segment mode's one
   * database is taken (giving another is a configuration error).
   */
  dataSource?: DataSource;
  /** A custom allocation store instead of `dataSource` (no `database` election on it). */
  store?: LeafAllocStore;
  /**
   * Where the issuers are elected: `zookeeper` (`zookeeper` required) or `database` (a row
   * per group in the MySQL/MariaDB or PostgreSQL `dataSource`, table
   * `leaf_sequence_issuer`; docs/design.md, "Sequence mode on the database").
   * @default 'zookeeper' with `zookeeper`, else 'database'
   */
  coordination?: 'zookeeper' | 'database';
  /** The election's ZooKeeper: required with `coordination: 'zookeeper'`, refused with `database`. */
  zookeeper?: LeafSequenceZookeeperOptions;
  /** The database-held election's settings (`coordination: 'database'`). */
  database?: LeafSequenceDatabaseOptions;
  /**
   * `http://host:port` under which other instances reach this one's forwarding route
   * (`GET /api/sequence/internal/ranges`, served by the application). Required.
   */
  advertise: string;
  /**
   * Issuer groups: each key belongs to one (FNV-1a of the key modulo this), each group
   * elects its own issuer. Change it only with every instance stopped.
   * @default 4
   */
  groups?: number;
  /** An issuer stops issuing this long before its session could have expired. @default 2000 */
  leaseMarginMs?: number;
  /** Period of each group's election round (the issuer's heartbeat). @default 500 */
  heartbeatIntervalMs?: number;
  /** How long a call waits for an issuer before `LEAF_SEQUENCE_NO_ISSUER`. @default 3000 */
  waitMs?: number;
  /** Deadline of one forwarded batch. @default 1000 */
  forwardTimeoutMs?: number;
  /**
   * The cluster secret of the traffic between instances (docs/security.md, "Peers"): every
   * forwarded batch and probe carries an HMAC of its method, path, query, time and a nonce,
   * and the internal routes (guarded by `SequencePeerGuard`) answer 401 `LEAF_UNAUTHORIZED`
   * without a valid one. At least 32 characters, the same on every instance. During a
   * rotation two: `[new, old]` — the first signs, either is accepted. Without one the internal
   * routes answer anyone (a warning at start): for a single instance on a trusted network only.
   * @default [] (none)
   */
  clusterSecret?: string | readonly string[];
  /**
   * Mutual TLS between instances: the PEM certificate and key this instance presents when it
   * calls another's `https://` advertised address, and the CA that address's certificate must
   * chain to. The application serves the internal routes on a TLS listener of its own that
   * asks for a client certificate from the same CA (docs/security.md, "Peers").
   */
  tls?: LeafSequenceTlsOptions;
  /**
   * An issuer whose buffer ran dry and whose range allocations have failed this long hands its
   * group to the next instance in line (docs/design.md, "Sequence mode").
   * @default 2000
   */
  handOverAfterMs?: number;
}

/** Sequence options after defaults and validation. */
export interface ResolvedSequenceOptions {
  /** Where ranges come from: `sequence.dataSource` / `store`, or segment mode's one database. */
  readonly allocation: OneAllocation;
  readonly coordination: 'zookeeper' | 'database';
  /** ZooKeeper's connect string; `''` with the database. */
  readonly connect: string;
  /** ZooKeeper: the requested session timeout; the database: `database.leaseMs`. */
  readonly sessionTimeoutMs: number;
  readonly advertise: string;
  readonly groups: number;
  readonly leaseMarginMs: number;
  readonly heartbeatIntervalMs: number;
  readonly waitMs: number;
  readonly forwardTimeoutMs: number;
  readonly handOverAfterMs: number;
  /** The accepted cluster secrets, the signing one first; empty: none (routes open). */
  readonly clusterSecret: readonly string[];
  /** Client certificate, key and CA of the calls between instances, or null. */
  readonly tls: LeafSequenceTlsOptions | null;
}

/** PEM certificate, key and CA of the calls between instances (`sequence.tls`). */
export interface LeafSequenceTlsOptions {
  cert: string | Buffer;
  key: string | Buffer;
  ca: string | Buffer;
}
