import type { DatabaseConfig } from './database-config';

/**
 * `LEAF_REGION` and its variables (docs/operations.md, "Regions"): the registry's database
 * (`LEAF_REGION_DB_URL`, opened on its own) and the data-centre ID are required with
 * it; none of them means anything without it. Problems go to `problems`.
 * @returns the registry's database (`null` without a region) and the start-up warnings: a
 *   data-centre ID assigned by hand in production (`production`: NODE_ENV=production with
 *   snowflake mode on) without a region registry.
 */
export function readRegion(
  set: ReadonlyMap<string, unknown>,
  database: DatabaseConfig | null,
  problems: string[],
  context: { readonly production: boolean; readonly dataCenterBits: number },
): { database: DatabaseConfig | null; warnings: string[] } {
  const related = [
    'LEAF_REGION_DB_URL',
    'LEAF_REGION_DATA_CENTER_ID',
    'LEAF_REGION_LEASE_MS',
    'LEAF_REGION_RENEW_MS',
    'LEAF_REGION_MARGIN_MS',
  ].filter((name) => set.has(name) || (name === 'LEAF_REGION_DB_URL' && database !== null));
  if (!set.has('LEAF_REGION')) {
    if (related.length > 0)
      problems.push(`${related.join(', ')} need LEAF_REGION (this region's name)`);
    return { database: null, warnings: handAssignedWarnings(context, set) };
  }
  if (database === null)
    problems.push(
      'LEAF_REGION needs LEAF_REGION_DB_URL (the region registry every region reaches)',
    );
  if (!set.has('LEAF_REGION_DATA_CENTER_ID'))
    problems.push('LEAF_REGION needs LEAF_REGION_DATA_CENTER_ID (the data-centre ID it leases)');
  return { database, warnings: [] };
}

/** The warning of a data-centre ID assigned by hand in production, without a region registry. */
function handAssignedWarnings(
  { production, dataCenterBits }: { readonly production: boolean; readonly dataCenterBits: number },
  set: ReadonlyMap<string, unknown>,
): string[] {
  if (!production || (!set.has('LEAF_DATA_CENTER_ID') && dataCenterBits === 0)) return [];
  return [
    'The data-centre ID is assigned by hand (LEAF_DATA_CENTER_ID): nothing stops another region from using the same one, and their snowflake IDs would collide. ' +
      'Lease it from a region registry instead: LEAF_REGION, LEAF_REGION_DB_URL, LEAF_REGION_DATA_CENTER_ID (docs/operations.md, "Regions").',
  ];
}
