/**
 * A Dockerfile read the way `docker build` reads it, for the specs that check the image
 * without a container engine: the static checks (test/deploy.e2e-spec.ts) and the image's
 * reproduction (test/docker-image.image-spec.ts, through ./image.ts). Only what our
 * Dockerfile uses is understood; anything else throws, so a new kind of instruction has to
 * be taught here rather than silently ignored.
 */

/** One instruction: its keyword (upper case) and the rest of its line, continuations joined. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** A `FROM … [AS name]` and the instructions that follow it. */
export interface Stage {
  readonly from: string;
  readonly name: string | null;
  readonly instructions: Instruction[];
}

/** Instructions per stage; comment lines dropped (also inside continuations), `\` lines joined. */
export function parseDockerfile(text: string): Stage[] {
  const lines = text.split('\n').filter((line) => !/^\s*#/.test(line));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of joined.split('\n')) {
    if (line.trim() === '') continue;
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) throw new Error(`Dockerfile: not an instruction: ${line}`);
    const keyword = match[1].toUpperCase();
    const args = match[2].trim();
    if (keyword === 'FROM') {
      const [from, as, name] = args.split(/\s+/);
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : null, instructions: [] });
    } else {
      if (stages.length === 0) throw new Error(`Dockerfile: ${keyword} before any FROM`);
      stages[stages.length - 1].instructions.push({ keyword, args });
    }
  }
  return stages;
}

/** The instructions of `stage` with `keyword`. */
export const only = (stage: Stage, keyword: string): Instruction[] =>
  stage.instructions.filter((instruction) => instruction.keyword === keyword);

/** The one instruction of `stage` with `keyword` (the last one counts for CMD, USER, …). */
export function last(stage: Stage, keyword: string): Instruction {
  const found = only(stage, keyword);
  if (found.length === 0) throw new Error(`Dockerfile: the stage ${stage.from} has no ${keyword}`);
  return found[found.length - 1];
}

/** `ENV A=1 B=2` (and `ENV A 1`) of a stage, in order. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { keyword, args } of stage.instructions) {
    if (keyword !== 'ENV') continue;
    if (!args.includes('=')) {
      const [name, ...value] = args.split(/\s+/);
      env[name] = value.join(' ');
    } else {
      for (const [, name, value] of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) {
        env[name] = value.replace(/^"|"$/g, '');
      }
    }
  }
  for (const [name, value] of Object.entries(env)) {
    if (value.includes('$'))
      throw new Error(`Dockerfile: ENV ${name}=${value}: no substitution here`);
  }
  return env;
}

/** A JSON-array (exec form) argument: `["node", "dist/src/main.js"]`. */
export function execForm(args: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new Error(`Dockerfile: not an exec-form (JSON array) command: ${args}`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.some((a) => typeof a !== 'string')) {
    throw new Error(`Dockerfile: not an exec-form (JSON array) command: ${args}`);
  }
  return parsed as string[];
}

/** The HEALTHCHECK's exec-form command (JSON array after CMD) and its `--name=value` options. */
export function healthcheckOf(stage: Stage): {
  options: Record<string, string>;
  command: string[];
} {
  const { args } = last(stage, 'HEALTHCHECK');
  const cmdAt = args.search(/\bCMD\b/);
  if (cmdAt < 0) throw new Error(`Dockerfile: HEALTHCHECK without CMD: ${args}`);
  const options = Object.fromEntries(
    [...args.slice(0, cmdAt).matchAll(/--([a-z-]+)=(\S+)/g)].map((m) => [m[1], m[2]]),
  );
  return { options, command: execForm(args.slice(cmdAt + 3).trim()) };
}

/** A `COPY [--from=stage] [--chown=…] src… dest`. */
export interface Copy {
  readonly from: string | null;
  readonly sources: string[];
  readonly dest: string;
}

/** The COPY instructions of `stage`, in order (the shell form; no wildcards, no --chown). */
export function copiesOf(stage: Stage): Copy[] {
  return only(stage, 'COPY').map(({ args }) => {
    const words = args.split(/\s+/);
    let from: string | null = null;
    while (words[0]?.startsWith('--')) {
      const flag = words.shift()!;
      const value = /^--from=(.+)$/.exec(flag);
      if (!value) throw new Error(`Dockerfile: COPY ${flag} is not understood here`);
      from = value[1];
    }
    if (words.length < 2)
      throw new Error(`Dockerfile: COPY needs a source and a destination: ${args}`);
    const dest = words.pop()!;
    for (const source of words) {
      if (/[*?[]/.test(source))
        throw new Error(`Dockerfile: COPY wildcards are not understood here: ${source}`);
    }
    return { from, sources: words, dest };
  });
}

/** WORKDIR of `stage` (absolute; `/` when none). */
export function workdirOf(stage: Stage): string {
  let dir = '/';
  for (const { args } of only(stage, 'WORKDIR')) {
    dir = args.startsWith('/') ? args : `${dir.replace(/\/$/, '')}/${args}`;
  }
  return dir;
}

/** The numeric `USER uid:gid` of `stage` (names need the image's /etc/passwd: refused). */
export function userOf(stage: Stage): { uid: number; gid: number } {
  const { args } = last(stage, 'USER');
  const match = /^(\d+)(?::(\d+))?$/.exec(args);
  if (!match)
    throw new Error(`Dockerfile: USER ${args}: only a numeric uid[:gid] is understood here`);
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

/** The paths of every `VOLUME ["…"]` (or `VOLUME /a /b`) of `stage`. */
export function volumesOf(stage: Stage): string[] {
  return only(stage, 'VOLUME').flatMap(({ args }) =>
    args.startsWith('[') ? execForm(args) : args.split(/\s+/),
  );
}

/**
 * `.dockerignore` as a predicate on context-relative paths (`src/main.ts`): true when the
 * path, or a directory above it, matches a pattern (`*`, `**`, `?`; a later `!pattern`
 * re-includes). What docker build leaves out of the build context.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const pattern = (negate ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
      let source = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === '*' && pattern[i + 1] === '*') {
          // `**/` any number of directories (none included); a trailing `**` anything.
          source += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
          i += pattern[i + 2] === '/' ? 2 : 1;
        } else if (c === '*') source += '[^/]*';
        else if (c === '?') source += '[^/]';
        else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { negate, regex: new RegExp(`^${source}$`) };
    });
  return (path: string): boolean => {
    const parts = path.split('/');
    let excluded = false;
    for (const { negate, regex } of rules) {
      // The path itself or one of its parent directories.
      const hit = parts.some((_, i) => regex.test(parts.slice(0, i + 1).join('/')));
      if (hit) excluded = !negate;
    }
    return excluded;
  };
}
