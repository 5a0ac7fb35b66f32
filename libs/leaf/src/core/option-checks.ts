/**
 * Problems found while resolving options; thrown together as one `LeafConfigurationError`.
 * The rules they are checked against are in ./leaf-defaults.ts (`LEAF_OPTION_RULES`).
 */
export type Problems = string[];
