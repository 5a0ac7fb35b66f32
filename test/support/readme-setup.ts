/**
 * What libs/leaf/README.md tells a user to do, read from its fenced blocks so that the
 * consumer tests (test/consumer-apps/) run the README's own words:
 *
 * - install commands: the lines of ```bash blocks (comments dropped). A block is for the
 *   Nest major its label names ("Nest 12", "NestJS 11" in the label's last sentence, the
 *   label being the prose between the previous block or heading and the fence); a label
 *   naming none is for every major. A block that installs `nestjs-leaf` itself starts an
 *   installation: the one for the major is used (or, when none names it, the first naming
 *   none; others, e.g. the remote client alone, are other kinds of application). Blocks
 *   without `nestjs-leaf` add to it. Commands installing `@nestjs/platform-fastify` belong
 *   to the Fastify variant.
 * - files: a ```ts block whose first line is a path comment (`// src/app.module.ts`) is
 *   that file's whole content; one importing `@nestjs/platform-fastify` is the Fastify
 *   variant of its path. Blocks without a path comment are excerpts and are not written.
 * - SQL: the ```sql blocks, in order, each once.
 *
 * The application is the one of the sections `## Install` and `## Setup`; the other sections'
 * blocks add to it on their own terms (`readmeSection`: an ORM section's files, commands and
 * SQL, on top of that application).
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
  /** The title of the `## ` section the block stands in (`''` before the first). */
  readonly section: string;
}

export type HttpPlatform = 'express' | 'fastify';

/** The README's instructions for one Nest major. */
export interface ReadmeSetup {
  /** Install commands for every application, as argv arrays, in README order. */
  readonly install: string[][];
  /** The extra install commands of the Fastify variant. */
  readonly fastifyInstall: string[][];
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
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\w*)\s*$/.exec(lines[i]);
    if (!open) {
      if (/^##\s/.test(lines[i])) section = lines[i].replace(/^##\s+/, '').trim();
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
    blocks.push({ lang, body: body.join('\n'), label: label.join(' '), line: i + 1, section });
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

/** The sections whose blocks make the application every consumer test builds. */
const APP_SECTIONS = ['Install', 'Setup'];

/** The path a ```ts block names on its first line (`// src/orders.service.ts`), if any. */
function pathOf(block: ReadmeBlock): string | undefined {
  return /^\/\/\s*(src\/\S+\.ts)\s*$/.exec(block.body.split('\n')[0])?.[1];
}

/** A section's own instructions, on top of the application of Install and Setup. */
export interface ReadmeSection {
  /** Its install commands, as argv arrays. */
  readonly install: string[][];
  /** Path (relative to the app) → content of its path-named ```ts blocks. */
  readonly files: Record<string, string>;
  /** The statements of its ```sql blocks. */
  readonly sql: string[];
}

/**
 * The blocks of the `## ` section titled `title`: install commands, path-named files (their
 * first line dropped) and SQL. Throws when the README has no such section.
 */
export function readmeSection(
  title: string,
  markdown = readFileSync(LIBRARY_README, 'utf8'),
): ReadmeSection {
  if (!markdown.split('\n').some((line) => line.trim() === `## ${title}`))
    throw new Error(`README: no section "## ${title}"`);
  const blocks = fencedBlocks(markdown).filter((block) => block.section === title);
  const files: Record<string, string> = {};
  for (const block of blocks) {
    const path = block.lang === 'ts' ? pathOf(block) : undefined;
    if (path) files[path] = `${block.body.split('\n').slice(1).join('\n').trim()}\n`;
  }
  return {
    install: blocks
      .filter((block) => block.lang === 'bash')
      .flatMap((block) => block.body.split('\n').map(commandWords))
      .filter((words) => words.length > 0),
    files,
    sql: blocks.filter((block) => block.lang === 'sql').map((block) => block.body.trim()),
  };
}

/** The README's instructions for Nest `major` (see the top of this file). */
export function readmeSetup(
  major: number,
  markdown = readFileSync(LIBRARY_README, 'utf8'),
): ReadmeSetup {
  const install: string[][] = [];
  const fastifyInstall: string[][] = [];
  const files: ReadmeSetup['files'] = { express: {}, fastify: {} };
  const sql: string[] = [];
  const blocks = fencedBlocks(markdown).filter((block) => APP_SECTIONS.includes(block.section));
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
      const fastify = words.some((word) => /^@nestjs\/platform-fastify(@|$)/.test(word));
      (fastify ? fastifyInstall : install).push(words);
    }
  }
  for (const block of blocks) {
    const applies = forMajor(block);
    if (block.lang === 'bash' || block.lang === 'sh') {
      continue;
    } else if (block.lang === 'ts' || block.lang === 'typescript') {
      const path = pathOf(block);
      if (!path || !applies) continue;
      const content = `${block.body.split('\n').slice(1).join('\n').trim()}\n`;
      if (/from '@nestjs\/platform-fastify'/.test(content)) {
        files.fastify[path] = content;
      } else {
        files.express[path] = content;
        files.fastify[path] ??= content;
      }
    } else if (block.lang === 'sql') {
      if (!sql.includes(block.body.trim())) sql.push(block.body.trim());
    }
  }
  return { install, fastifyInstall, files, sql };
}
