/**
 * What libs/leaf/README.md and the ORM pages of docs/integrations/ tell a user to do, read from
 * their fenced blocks so that the consumer tests (test/consumer-apps/) run their own words:
 *
 * - install commands: the lines of ```bash blocks (comments dropped). A block is for the
 *   Nest major its label names ("Nest 12", "NestJS 11" in the label's last sentence, the
 *   label being the prose between the previous block or heading and the fence); a label
 *   naming none is for every major. A block that installs `nestjs-leaf` itself starts an
 *   installation: the one for the major is used (or, when none names it, the first naming
 *   none; others, e.g. the remote client alone, are other kinds of application). Blocks
 *   without `nestjs-leaf` add to it. Commands installing `@nestjs/platform-fastify` belong
 *   to the Fastify variant. Lines running `npx` (`npx prisma generate`) are build steps, not
 *   installs: they run after the files are written, before the build.
 * - files: a ```ts block whose first line is a path comment (`// src/app.module.ts`) is
 *   that file's whole content; one importing `@nestjs/platform-fastify` is the Fastify
 *   variant of its path. Blocks without a path comment are excerpts and are not written.
 *   A ```prisma block whose first line is `// prisma/<name>.prisma` is that schema file.
 * - SQL: the ```sql blocks, in order, each once.
 *
 * The application of _Setup_ reads the README's sections `## Install` and `## Setup` only. Each
 * ORM page's `## Set it up` (docs/integrations/prisma.md, ...) is read alone by
 * {@link pageIntegration}: its install commands, its files (any block whose first line is a
 * path comment, `// src/orders.service.ts` or `// prisma/schema.prisma`) and its SQL, which a
 * fresh application that did _Setup_ adds (test/consumer-apps/orm-consumer-app-suite.ts). Its
 * `## On MariaDB or MySQL` may give whole files that replace those of the same path on those
 * databases ({@link mariadbOverlay}).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const LIBRARY_README = join(__dirname, '..', '..', 'libs', 'leaf', 'README.md');

/** A fenced block of the README with the prose just before it. */
export interface ReadmeBlock {
  readonly lang: string;
  readonly body: string;
  /** The text between the previous fence or heading and this block's fence. */
  readonly label: string;
  /** 1-based line number of the opening fence. */
  readonly line: number;
}

export type HttpPlatform = 'express' | 'fastify';

/** The README's instructions for one Nest major. */
export interface ReadmeSetup {
  /** Install commands for every application, as argv arrays, in README order. */
  readonly install: string[][];
  /** The extra install commands of the Fastify variant. */
  readonly fastifyInstall: string[][];
  /** Build steps (`npx ...`), to run once the files are written, before the build. */
  readonly prepare: string[][];
  /** Path (relative to the app) → content, per platform. */
  readonly files: Record<HttpPlatform, Record<string, string>>;
  /** The SQL statements of the ```sql blocks. */
  readonly sql: string[];
}

/** Every fenced block of `markdown`, indented ones (inside list items) included. */
export function fencedBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  let label: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\w*)\s*$/.exec(lines[i]);
    if (!open) {
      if (/^#{1,6}\s/.test(lines[i])) label = [];
      else if (lines[i].trim() !== '') label.push(lines[i].trim());
      continue;
    }
    const [, indent, fence, lang] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && lines[j].trim() !== fence) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
      j++;
    }
    if (j === lines.length) throw new Error(`README: the fence at line ${i + 1} is never closed`);
    blocks.push({ lang, body: body.join('\n'), label: label.join(' '), line: i + 1 });
    label = [];
    i = j;
  }
  return blocks;
}

/**
 * The Nest majors the last sentence of a label names (`Nest 12`, `NestJS 11`); empty when it
 * names none. Earlier sentences may mention other lines in passing.
 */
export function majorsNamed(label: string): number[] {
  const sentences = label.split(/(?<=[.!?][)`'"]*)\s+/).filter((part) => part.trim() !== '');
  const last = sentences[sentences.length - 1] ?? '';
  return [...last.matchAll(/\bNest(?:JS)?\s+(\d+)\b/gi)].map((match) => Number(match[1]));
}

/**
 * One shell line as argv: words split on blanks, a trailing `# comment` dropped. Quotes,
 * variables and operators are refused (the README's commands are plain words).
 */
export function commandWords(line: string): string[] {
  const code = line.replace(/(^|\s)#.*$/, '').trim();
  if (code === '') return [];
  if (/["'`$\\|;&<>()]/.test(code)) {
    throw new Error(`README: not a plain command, the test cannot run it as written: ${line}`);
  }
  return code.split(/\s+/);
}

/**
 * The text of the `## ` sections whose headings `wanted` accepts (each with its subsections),
 * in README order: a part of the README that {@link fencedBlocks} can read alone.
 */
export function readmeSections(markdown: string, wanted: (heading: string) => boolean): string {
  const kept: string[] = [];
  let keep = false;
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || line.trim() === fence)) {
      fence = fence === undefined ? marker : undefined;
    } else if (fence === undefined && /^## /.test(line)) {
      keep = wanted(line.slice(3).trim());
    }
    if (keep) kept.push(line);
  }
  return kept.join('\n');
}

/** One integration section's instructions, for an application that did _Setup_. */
export interface ReadmeIntegration {
  /** Install commands, as argv arrays, in README order. */
  readonly install: string[][];
  /** Path (relative to the app) → content: every block whose first line is a path comment. */
  readonly files: Record<string, string>;
  /** The SQL statements of the section's ```sql blocks. */
  readonly sql: string[];
}

/**
 * The section of the README headed `heading` (exactly), read as {@link ReadmeIntegration}.
 * @throws when the README has no such section.
 */
export function readmeIntegration(
  heading: string,
  markdown = readFileSync(LIBRARY_README, 'utf8'),
): ReadmeIntegration {
  const section = readmeSections(markdown, (title) => title === heading);
  if (section === '') throw new Error(`README: no section headed "## ${heading}"`);
  return integrationOf(section);
}

/** docs/integrations/`page`.md: each ORM's guide, its one copy. */
export function integrationPage(page: string): string {
  return readFileSync(join(__dirname, '..', '..', 'docs', 'integrations', `${page}.md`), 'utf8');
}

/** The heading of the section of an integration page that sets up a complete application. */
export const SET_IT_UP = 'Set it up';

/**
 * The section `## Set it up` of docs/integrations/`page`.md (a complete application on
 * PostgreSQL, on top of the package README's _Setup_), read as {@link ReadmeIntegration}.
 * @throws when the page has no such section.
 */
export function pageIntegration(page: string): ReadmeIntegration {
  return readmeIntegration(SET_IT_UP, integrationPage(page));
}

/**
 * The section `## On MariaDB or MySQL` of docs/integrations/`page`.md read as
 * {@link ReadmeIntegration}: its install commands and its whole files, which replace the
 * files of the same path of its `## Set it up` on MariaDB (empty when the page has no such
 * section).
 */
export function mariadbOverlay(page: string): ReadmeIntegration {
  return integrationOf(
    readmeSections(integrationPage(page), (heading) => heading === 'On MariaDB or MySQL'),
  );
}

/** Every block of `markdown` read as {@link ReadmeIntegration} (a section, or a whole page). */
export function integrationOf(markdown: string): ReadmeIntegration {
  const install: string[][] = [];
  const files: Record<string, string> = {};
  const sql: string[] = [];
  for (const block of fencedBlocks(markdown)) {
    const [first, ...rest] = block.body.split('\n');
    if (block.lang === 'bash' || block.lang === 'sh') {
      install.push(
        ...block.body
          .split('\n')
          .map(commandWords)
          .filter((words) => words.length > 0),
      );
    } else if (block.lang === 'sql') {
      sql.push(block.body.trim());
    } else {
      const path = /^(?:\/\/|#|--)\s*((?:src|prisma)\/\S+\.\w+)\s*$/.exec(first)?.[1];
      if (path) files[path] = `${rest.join('\n').trim()}\n`;
    }
  }
  return { install, files, sql };
}

/** The README's instructions for Nest `major` (see the top of this file). */
export function readmeSetup(
  major: number,
  readme = readFileSync(LIBRARY_README, 'utf8'),
): ReadmeSetup {
  const markdown = readmeSections(
    readme,
    (heading) => heading === 'Install' || heading === 'Setup',
  );
  const install: string[][] = [];
  const fastifyInstall: string[][] = [];
  const prepare: string[][] = [];
  const files: ReadmeSetup['files'] = { express: {}, fastify: {} };
  const sql: string[] = [];
  const blocks = fencedBlocks(markdown);
  const forMajor = (block: ReadmeBlock) => {
    const named = majorsNamed(block.label);
    return named.length === 0 || named.includes(major);
  };
  const shell = blocks
    .filter((block) => block.lang === 'bash' || block.lang === 'sh')
    .map((block) => ({
      block,
      commands: block.body
        .split('\n')
        .map(commandWords)
        .filter((words) => words.length > 0),
    }));
  const installsLeaf = (commands: string[][]) =>
    commands.some((words) => words.includes('nestjs-leaf'));
  const starts = shell.filter(({ block, commands }) => installsLeaf(commands) && forMajor(block));
  const start = starts.find(({ block }) => majorsNamed(block.label).includes(major)) ?? starts[0];
  for (const { block, commands } of shell) {
    if (!forMajor(block) || (installsLeaf(commands) && block !== start?.block)) continue;
    for (const words of commands) {
      if (words[0] === 'npx') {
        prepare.push(words);
        continue;
      }
      const fastify = words.some((word) => /^@nestjs\/platform-fastify(@|$)/.test(word));
      (fastify ? fastifyInstall : install).push(words);
    }
  }
  for (const block of blocks) {
    const applies = forMajor(block);
    if (block.lang === 'bash' || block.lang === 'sh') {
      continue;
    } else if (block.lang === 'ts' || block.lang === 'typescript') {
      const path = /^\/\/\s*(src\/\S+\.ts)\s*$/.exec(block.body.split('\n')[0])?.[1];
      if (!path || !applies) continue;
      const content = `${block.body.split('\n').slice(1).join('\n').trim()}\n`;
      if (/from '@nestjs\/platform-fastify'/.test(content)) {
        files.fastify[path] = content;
      } else {
        files.express[path] = content;
        files.fastify[path] ??= content;
      }
    } else if (block.lang === 'prisma') {
      const path = /^\/\/\s*(prisma\/\S+\.prisma)\s*$/.exec(block.body.split('\n')[0])?.[1];
      if (!path || !applies) continue;
      const content = `${block.body.split('\n').slice(1).join('\n').trim()}\n`;
      files.express[path] = content;
      files.fastify[path] = content;
    } else if (block.lang === 'sql') {
      if (!sql.includes(block.body.trim())) sql.push(block.body.trim());
    }
  }
  return { install, fastifyInstall, prepare, files, sql };
}

/** The README's SQL split into statements (one block may hold several). */
export function sqlStatements(blocks: readonly string[]): string[] {
  return blocks
    .flatMap((block) => block.split(/;\s*(?:\n|$)/))
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '' && !statement.startsWith('--'));
}
