/**
 * The issuer group of `key` among `groups` (docs/design.md, "Sequence mode"): FNV-1a of the
 * key modulo the number of groups, so every instance maps a key to the same group without
 * coordination. Changing `groups` moves keys between issuers: do it with a full restart.
 */
export function keyGroup(key: string, groups: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % groups;
}
