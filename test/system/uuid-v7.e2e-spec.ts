/**
 * CI subset of the UUIDv7 proof (the full one: uuid-v7.system-spec.ts): three built apps
 * started as a deployer does on the shared ZooKeeper, 50,000 UUIDv7 from each in batches of
 * 100, `p0`'s clock stepped back 2 ms (libfaketime) after 10,000 of its own, timed so that
 * its generator is issuing at that moment (scenarios/uuid-v7.ts); every UUID valid
 * (RFC 9562), none twice, each process strictly increasing with its own worker ID.
 */
import { faketimeAvailable, LIBFAKETIME_MT } from '../support/faketime';
import { describeWhen, describeWithServices } from '../support/services';
import { expectUuidV7Proof, uuidV7ThreeProcesses } from './scenarios/uuid-v7';

jest.setTimeout(120_000);

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'system (CI subset): UUIDv7 from three processes',
  () =>
    describeWithServices(['zookeeper'], 'UUIDv7 with a clock step', () => {
      it('3 × 50,000 UUIDv7, one clock stepped back 2 ms: all valid, none twice, each process strictly increasing', async () => {
        // Under the load of the whole suite p0 may never be issuing within 2 ms of a step
        // (then only the invariants are checked); the full run requires the step to be met.
        expectUuidV7Proof(await uuidV7ThreeProcesses('ci'), { stepMustBeSeen: false });
      });
    }),
);
