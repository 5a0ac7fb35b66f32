import { Logger } from '@nestjs/common';
import type { ZkClient } from '../../core/zookeeper/zk-client.port';
import type { ZookeeperClient } from '../../adapters/zookeeper/zookeeper.client';

/** What a {@link ZkClientFactory} is given. */
export interface ZkClientFactoryOptions {
  /** Connect string (`snowflake.zookeeper.connect`). */
  readonly connect: string;
  /** Requested session timeout (`snowflake.zookeeper.sessionTimeoutMs`). */
  readonly sessionTimeoutMs: number;
}

/**
 * Creates the ZooKeeper client of snowflake mode (injected under `LEAF_ZK_CLIENT_FACTORY`;
 * tests override it to hand out a `FakeZkClient`). The client is created unconnected; the
 * module connects it at start and closes it at shutdown.
 */
export type ZkClientFactory = (options: ZkClientFactoryOptions) => ZkClient;

/**
 * The default factory: the native {@link ZookeeperClient}, logging through Nest. The adapter
 * (and with it the native `zookeeper` addon, an optional peer dependency) is loaded on first
 * use, so an application without ZooKeeper never needs it installed.
 */
export const defaultZkClientFactory: ZkClientFactory = ({ connect, sessionTimeoutMs }) => {
  const logger = new Logger('ZooKeeper');
  return createZookeeperClient({ connect, sessionTimeoutMs, logger: (m) => logger.log(m) });
};

/**
 * A ZooKeeper client on the native adapter, for tools outside `LeafModule` (the `leaf` CLI):
 * unconnected, silent unless `logger` is given. Loads the optional `zookeeper` addon now.
 */
export function createZookeeperClient(
  options: ZkClientFactoryOptions & { readonly logger?: (message: string) => void },
): ZkClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ZookeeperClient: Client } = require('../../adapters/zookeeper/zookeeper.client') as {
    ZookeeperClient: typeof ZookeeperClient;
  };
  return new Client({ ...options });
}
