import type { LeafConfigurationError } from 'nestjs-leaf';
import { OpaqueIds } from 'nestjs-leaf/formats';
import { readSecretList } from './peer-config';

/**
 * `LEAF_OPAQUE_KEYS` or its file, each key checked as the library will (docs/public-ids.md);
 * `null` when neither is set or they do not check. A problem never repeats a key.
 */
export function readOpaqueKeys(
  env: NodeJS.ProcessEnv,
  set: ReadonlyMap<string, unknown>,
  problems: string[],
): readonly string[] | null {
  const keys = readSecretList(env, set, problems, 'LEAF_OPAQUE_KEYS', 'opaque.keys');
  if (keys === null) return null;
  try {
    OpaqueIds.fromEntries(keys);
    return keys;
  } catch (error) {
    const from = set.has('LEAF_OPAQUE_KEYS') ? 'LEAF_OPAQUE_KEYS' : 'LEAF_OPAQUE_KEYS_FILE';
    for (const problem of (error as LeafConfigurationError).problems)
      problems.push(`${from}: ${problem}`);
    return null;
  }
}
