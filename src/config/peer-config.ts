import { readFileSync } from 'node:fs';
import { LEAF_OPTION_RULES, ruleProblem } from 'nestjs-leaf/server';

/**
 * The credentials between instances read from the environment (docs/security.md, "Peers"):
 * the cluster secret and the mutual-TLS listener of the internal routes. Part of
 * `loadAppConfig` (./app-config.ts), which reports the problems.
 */

/** The mutual-TLS listener of the internal routes (`LEAF_INTERNAL_*`). */
export interface InternalListenerConfig {
  readonly port: number;
  /** `HOST`: the address it listens on, as the public listener. */
  readonly host: string;
  /** PEM: this instance's certificate and key (server and client), and the cluster's CA. */
  readonly tls: { readonly cert: Buffer; readonly key: Buffer; readonly ca: Buffer };
}

/**
 * A list of secrets from its variable (`LEAF_CLUSTER_SECRET`, `LEAF_OPAQUE_KEYS`; already
 * parsed into `set`) or the file of `<name>_FILE` (commas or line breaks between items),
 * checked against the rule of `option`; `null` when neither is set. A problem never repeats a
 * secret.
 */
export function readSecretList(
  env: NodeJS.ProcessEnv,
  set: ReadonlyMap<string, unknown>,
  problems: string[],
  name: 'LEAF_CLUSTER_SECRET' | 'LEAF_OPAQUE_KEYS',
  option: 'sequence.clusterSecret' | 'opaque.keys',
): readonly string[] | null {
  const rule = LEAF_OPTION_RULES[option];
  const fileName = `${name}_FILE`;
  const file = set.get(fileName) as string | undefined;
  if (set.has(name) || env[name]?.trim()) {
    if (file !== undefined) {
      problems.push(`${name} and ${fileName} are exclusive: set one`);
      return null;
    }
    const secrets = set.get(name) as string[] | undefined;
    // Invalid: already reported by the variable's rule.
    if (secrets === undefined) return null;
    if (secrets.length === 0) {
      problems.push(`${name} must be ${rule.rangeNote}`);
      return null;
    }
    return secrets;
  }
  if (file === undefined) return null;
  const text = readOrReport(fileName, file, problems, (path) => readFileSync(path, 'utf8'));
  if (text === undefined) return null;
  const secrets = text
    .split(/[,\r\n]+/)
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '');
  if (secrets.length === 0 || ruleProblem(rule, secrets) !== null) {
    problems.push(`${fileName} must hold ${rule.rangeNote} (the file ${file})`);
    return null;
  }
  return secrets;
}

/** `read(file)`, or `undefined` with the problem `<name>: cannot read <file> (<code>)`. */
function readOrReport<T>(
  name: string,
  file: string,
  problems: string[],
  read: (file: string) => T,
): T | undefined {
  try {
    return read(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    problems.push(`${name}: cannot read ${file} (${code})`);
    return undefined;
  }
}

/** The internal listener's PEM files: certificate, key, CA. */
const INTERNAL_TLS_FILES = [
  'LEAF_INTERNAL_TLS_CERT',
  'LEAF_INTERNAL_TLS_KEY',
  'LEAF_INTERNAL_TLS_CA',
];

/**
 * The internal listener from `LEAF_INTERNAL_PORT` and its three PEM files (all four or none),
 * the files read now; `null` when none is set or a problem was found.
 */
export function readInternalListener(
  set: ReadonlyMap<string, unknown>,
  host: string,
  problems: string[],
): InternalListenerConfig | null {
  const names = ['LEAF_INTERNAL_PORT', ...INTERNAL_TLS_FILES];
  const given = names.filter((name) => set.has(name));
  if (given.length === 0) return null;
  if (given.length < names.length) {
    const missing = names.filter((name) => !set.has(name));
    problems.push(
      `LEAF_INTERNAL_PORT, LEAF_INTERNAL_TLS_CERT, LEAF_INTERNAL_TLS_KEY and LEAF_INTERNAL_TLS_CA go together: ${missing.join(', ')} missing`,
    );
    return null;
  }
  const [cert, key, ca] = INTERNAL_TLS_FILES.map((name) =>
    readOrReport(name, set.get(name) as string, problems, (path) => readFileSync(path)),
  );
  if (!cert || !key || !ca) return null;
  return { port: set.get('LEAF_INTERNAL_PORT') as number, host, tls: { cert, key, ca } };
}
