import type { LeafMode } from 'nestjs-leaf';
import { TAG_PATTERN_SYNTAX, TagPatterns } from './tag-patterns';

/** What a client route issues from: a mode, or gapless series. */
export type ClientMode = LeafMode | 'gapless';

/** The modes a client token can be scoped to. */
export const CLIENT_MODES: readonly ClientMode[] = ['segment', 'snowflake', 'sequence', 'gapless'];

/** One client of `LEAF_CLIENT_TOKENS` (docs/security.md, "Callers"), validated. */
export interface ClientDefinition {
  /** The operator's name for the client (in error messages and logs; never the token). */
  readonly name: string;
  /** SHA-256 of the token, 64 lowercase hexadecimal characters. */
  readonly sha256: string;
  /** The modes it may use. */
  readonly modes: ReadonlySet<ClientMode>;
  /** The tags (keys) it may use. */
  readonly tags: TagPatterns;
  /** Its quota in IDs, per instance; `null`: none. */
  readonly quota: { readonly idsPerSecond: number; readonly burst: number } | null;
}

const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const SHA256 = /^[0-9a-fA-F]{64}$/;
const FIELDS = new Set(['name', 'sha256', 'modes', 'tags', 'idsPerSecond', 'burst']);
/** Largest quota figure: far above what an instance serves, well inside a double's integers. */
export const MAX_QUOTA = 1_000_000_000;

const isQuota = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_QUOTA;

/**
 * Parses and validates the JSON of `LEAF_CLIENT_TOKENS` (or of the file of
 * `LEAF_CLIENT_TOKENS_FILE`): an array of `{name, sha256, modes, tags, idsPerSecond?, burst?}`.
 * Every problem is listed, named by the entry's position and name; no problem echoes a hash,
 * a token or the text (JSON.parse's own message quotes the input, so it is not passed on).
 * `source` names the variable in the problems.
 */
export function parseClientDefinitions(
  text: string,
  source: string,
): { clients: ClientDefinition[]; problems: string[] } {
  const problems: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { clients: [], problems: [`${source} is not valid JSON (the text is not shown)`] };
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    return {
      clients: [],
      problems: [`${source} must be a non-empty JSON array of clients {name, sha256, modes, tags}`],
    };
  }
  const clients: ClientDefinition[] = [];
  const names = new Map<string, number>();
  const hashes = new Map<string, number>();
  parsed.forEach((entry: unknown, index) => {
    const at = `${source}[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${at} must be an object {name, sha256, modes, tags}`);
      return;
    }
    const e = entry as Record<string, unknown>;
    const label = typeof e.name === 'string' && NAME.test(e.name) ? `${at} ("${e.name}")` : at;
    const before = problems.length;
    const unknown = Object.keys(e).filter((key) => !FIELDS.has(key));
    if (unknown.length > 0) {
      problems.push(`${label}: unknown field(s) ${unknown.map((k) => `"${k}"`).join(', ')}`);
    }
    if (typeof e.name !== 'string' || !NAME.test(e.name)) {
      problems.push(
        `${label}: name must be 1-64 characters of letters, digits, "_", "-", "." or ":"`,
      );
    } else if (names.has(e.name)) {
      problems.push(`${label}: name is already used by entry ${names.get(e.name)}`);
    } else names.set(e.name, index);
    if (typeof e.sha256 !== 'string' || !SHA256.test(e.sha256)) {
      problems.push(
        `${label}: sha256 must be the token's SHA-256 as 64 hexadecimal characters (\`leaf tokens hash\`; the value is not shown)`,
      );
    } else {
      const hash = e.sha256.toLowerCase();
      if (hashes.has(hash)) {
        problems.push(
          `${label}: sha256 is the same as entry ${hashes.get(hash)}'s (one token, one client)`,
        );
      } else hashes.set(hash, index);
    }
    const modes = e.modes;
    const modesValid =
      Array.isArray(modes) &&
      modes.length > 0 &&
      modes.every((m) => m === '*' || (CLIENT_MODES as readonly unknown[]).includes(m));
    if (!modesValid) {
      problems.push(
        `${label}: modes must be a non-empty array of ${CLIENT_MODES.map((m) => `"${m}"`).join(', ')} or "*"`,
      );
    }
    const tags = e.tags;
    const tagsValid =
      Array.isArray(tags) &&
      tags.length > 0 &&
      tags.length <= 1000 &&
      tags.every((t) => typeof t === 'string' && TAG_PATTERN_SYNTAX.test(t));
    if (!tagsValid) {
      problems.push(
        `${label}: tags must be a non-empty array (at most 1000) of tag names or patterns with "*" (1-128 characters of letters, digits, "_", "-", ".", ":" or "*")`,
      );
    }
    if (e.idsPerSecond !== undefined && !isQuota(e.idsPerSecond)) {
      problems.push(`${label}: idsPerSecond must be an integer in 1..${MAX_QUOTA}`);
    }
    if (e.burst !== undefined && !isQuota(e.burst)) {
      problems.push(`${label}: burst must be an integer in 1..${MAX_QUOTA}`);
    } else if (e.burst !== undefined && e.idsPerSecond === undefined) {
      problems.push(`${label}: burst needs idsPerSecond (the rate the burst refills at)`);
    }
    if (problems.length > before) return;
    const idsPerSecond = e.idsPerSecond as number | undefined;
    clients.push({
      name: e.name as string,
      sha256: (e.sha256 as string).toLowerCase(),
      modes: new Set((modes as string[]).includes('*') ? CLIENT_MODES : (modes as ClientMode[])),
      tags: new TagPatterns(tags as string[]),
      quota:
        idsPerSecond === undefined
          ? null
          : { idsPerSecond, burst: (e.burst as number | undefined) ?? idsPerSecond },
    });
  });
  return { clients: problems.length > 0 ? [] : clients, problems };
}

/**
 * The clients of `LEAF_CLIENT_TOKENS` (inline JSON) or `LEAF_CLIENT_TOKENS_FILE` (a JSON file,
 * read once at start), exclusive; `null` when neither is set (the ID routes are open).
 */
export function loadClientDefinitions(
  inline: string | undefined,
  file: string | undefined,
  readFile: (path: string) => string,
): { clients: ClientDefinition[] | null; problems: string[] } {
  if (inline !== undefined && file !== undefined) {
    return {
      clients: null,
      problems: ['LEAF_CLIENT_TOKENS and LEAF_CLIENT_TOKENS_FILE are exclusive: set one'],
    };
  }
  let text = inline;
  if (file !== undefined) {
    try {
      text = readFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      return {
        clients: null,
        problems: [`LEAF_CLIENT_TOKENS_FILE ${file} cannot be read (${code})`],
      };
    }
  }
  if (text === undefined) return { clients: null, problems: [] };
  const source = file !== undefined ? `LEAF_CLIENT_TOKENS_FILE ${file}` : 'LEAF_CLIENT_TOKENS';
  const { clients, problems } = parseClientDefinitions(text, source);
  return { clients: problems.length > 0 ? null : clients, problems };
}
