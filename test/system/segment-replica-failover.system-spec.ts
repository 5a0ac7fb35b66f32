import { describeOnPrivateServers } from './scenarios/scenario';
import {
  expectFailoverControlDuplicates,
  expectFailoverSafe,
  segmentReplicaFailover,
} from './scenarios/segment-replica-failover';

jest.setTimeout(600_000);

describeOnPrivateServers(
  ['zookeeper'],
  'system: failover to a lagging asynchronous replica (private primary and GTID replica)',
  {
    'with the high-water mark, three instances sharing tags, one replaced around the failover: repaired once per tag, no ID repeats':
      async () => expectFailoverSafe(await segmentReplicaFailover('full')),
    'control: the same failover without the high-water mark re-issues IDs': async () =>
      expectFailoverControlDuplicates(await segmentReplicaFailover('full', { highWater: false })),
  },
);
