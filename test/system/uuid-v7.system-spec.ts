/**
 * The UUIDv7 proof of issue 29 (docs/reliability.md, "UUIDv7"; docs/formats.md): three
 * built apps started as a deployer does on the shared ZooKeeper, 1,000,000 UUIDv7 from each
 * in batches of 100, `p0`'s clock stepped back 2 ms (libfaketime) after 300,000 of its own,
 * timed so that its generator is issuing at that moment (scenarios/uuid-v7.ts); every UUID
 * valid (RFC 9562), none of the 3,000,000 twice, each process strictly increasing with its
 * own worker ID; `npm run test:system`. The CI subset: uuid-v7.e2e-spec.ts (3 × 50,000).
 */
import { faketimeAvailable, LIBFAKETIME_MT } from '../support/faketime';
import { describeWhen, describeWithServices } from '../support/services';
import { expectUuidV7Proof, uuidV7ThreeProcesses } from './scenarios/uuid-v7';

jest.setTimeout(600_000);

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'system: UUIDv7 from three processes',
  () =>
    describeWithServices(['zookeeper'], 'UUIDv7 with a clock step', () => {
      it('3 × 1,000,000 UUIDv7, one clock stepped back 2 ms: all valid, none twice, each process strictly increasing', async () => {
        expectUuidV7Proof(await uuidV7ThreeProcesses('full'));
      });
    }),
);
