import type { CoordinationProblem } from 'nestjs-leaf/server';

/**
 * The library's coordination problems (`coordinationPlan`, nestjs-leaf/server) in the
 * environment's words: `LEAF_COORDINATION` and the variables it reads (docs/configuration.md).
 */
export const COORDINATION_PROBLEMS: Record<CoordinationProblem, string> = {
  'zookeeper-missing':
    'LEAF_COORDINATION=zookeeper needs LEAF_ZK_ADDRESS (or LEAF_SEQUENCE_ZK for sequence mode)',
  'database-none':
    'LEAF_COORDINATION=database needs a database: LEAF_SEGMENT_ENABLED=true or LEAF_SEQUENCE_ENABLED=true',
  'database-several':
    'LEAF_COORDINATION=database needs one database (LEAF_DB_URL), not LEAF_DB_URLS',
  'database-embedded':
    'LEAF_COORDINATION=database needs LEAF_DB_URL=mysql://… or postgres://… (SQLite serves one process)',
  'election-missing':
    'LEAF_SEQUENCE_ENABLED=true needs an issuer election: ZooKeeper (LEAF_SEQUENCE_ZK or LEAF_ZK_ADDRESS), or LEAF_DB_URL on MySQL/MariaDB or PostgreSQL (SQLite serves one process and holds no election)',
  'election-zookeeper-missing':
    'LEAF_COORDINATION=zookeeper needs ZooKeeper for the issuer election: set LEAF_SEQUENCE_ZK or LEAF_ZK_ADDRESS',
  'worker-id-with-zookeeper':
    'LEAF_WORKER_ID and LEAF_ZK_ADDRESS are exclusive: with ZooKeeper the worker ID is assigned by it',
  'lease-with-zookeeper':
    "LEAF_SEQUENCE_LEASE_MS is the database election's: with ZooKeeper set LEAF_SEQUENCE_SESSION_TIMEOUT_MS",
  'session-with-database':
    "LEAF_SEQUENCE_SESSION_TIMEOUT_MS is ZooKeeper's: with LEAF_COORDINATION=database set LEAF_SEQUENCE_LEASE_MS",
};
