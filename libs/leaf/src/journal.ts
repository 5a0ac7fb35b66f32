/**
 * `nestjs-leaf/journal`: who issued an ID — `IdWhoisService`, which `LeafModule` provides
 * whatever the modes, and its answers. It reads the ID journal that the option `journal`
 * writes (docs/design.md, "The ID journal"); its error is `IdOriginUnknownError`
 * (`nestjs-leaf/errors`).
 */
export {
  IdWhoisService,
  type IdOrigin,
  type RangeIdOrigin,
  type SnowflakeIdOrigin,
  type WorkerIdSource,
} from './nest/journal/id-whois.service';
export type { RangeGrant, RangeJournalEntry } from './core/segment/leaf-alloc-store.port';
export {
  tenureAt,
  type WorkerLeaseJournalRow,
  type WorkerLeaseTenure,
} from './core/snowflake/worker-lease-store.port';
