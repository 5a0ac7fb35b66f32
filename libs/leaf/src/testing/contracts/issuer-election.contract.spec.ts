import { ZookeeperIssuerElection } from '../../adapters/zookeeper/zookeeper-issuer.election';
import { FakeClock } from '../fake-clock';
import { FakeZkClient } from '../fake-zk.client';
import { InMemoryIssuerElection } from '../in-memory-issuer.election';
import { InMemorySequenceIssuerStore } from '../in-memory-sequence-issuer.store';
import { issuerElectionContract } from './issuer-election.contract';

/** Fake time for the election: the wall clock, the monotonic clock and the store's move together. */
function fakeTime() {
  const clock = new FakeClock();
  let mono = 0;
  return {
    clock,
    monotonic: () => mono,
    pass: async (ms: number) => {
      mono += ms;
      clock.advance(ms);
    },
  };
}

// ZooKeeper and the leaf_sequence_issuer rows (MariaDB, PostgreSQL) run the same contract in
// test/contracts/issuer-election.e2e-spec.ts.
issuerElectionContract('InMemoryIssuerElection', async () => {
  const time = fakeTime();
  const store = new InMemorySequenceIssuerStore(() => time.clock.now());
  return {
    ...time,
    leaseMs: 10_000,
    election: () => new InMemoryIssuerElection(() => time.clock.now(), store),
    close: async () => undefined,
  };
});

issuerElectionContract('ZookeeperIssuerElection on FakeZkClient', async () => {
  const time = fakeTime();
  const root = new FakeZkClient();
  return {
    ...time,
    leaseMs: 10_000,
    election: () => new ZookeeperIssuerElection(root.newSession()),
    close: () => root.close(),
  };
});
