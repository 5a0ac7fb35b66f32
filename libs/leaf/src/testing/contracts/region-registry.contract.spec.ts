import { FakeClock } from '../fake-clock';
import { InMemoryRegionRegistry } from '../in-memory-region.registry';
import { inMemoryLeaseTableHarness } from './lease-table.harness';
import { regionRegistryContract } from './region-registry.contract';

// The TypeORM registry runs the same contract on MariaDB and PostgreSQL in
// test/contracts/region-registry.e2e-spec.ts.
regionRegistryContract('InMemoryRegionRegistry', async () => {
  const clock = new FakeClock();
  const registry = new InMemoryRegionRegistry(clock);
  return { registry, ...inMemoryLeaseTableHarness(clock, registry) };
});
