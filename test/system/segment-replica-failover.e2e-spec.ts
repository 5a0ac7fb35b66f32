import { describeOnPrivateServers } from './scenarios/scenario';
import { expectFailoverSafe, segmentReplicaFailover } from './scenarios/segment-replica-failover';

jest.setTimeout(180_000);

describeOnPrivateServers(
  ['zookeeper'],
  'system (CI subset): failover to a lagging asynchronous replica, three instances sharing tags',
  {
    'the high-water mark repairs each tag once on the promoted replica; a fresh instance repeats no ID':
      async () => expectFailoverSafe(await segmentReplicaFailover('ci')),
  },
);
