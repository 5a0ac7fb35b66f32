/**
 * Problems found while resolving options; thrown together as one `LeafConfigurationError`.
 * The rules they are checked against are in ./leaf-option-rules.ts (`LEAF_OPTION_RULES`).
 */
export type Problems = string[];
