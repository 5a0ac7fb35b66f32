#!/usr/bin/env node
// Checks the manual's cross-references: every relative link `[..](file.md#anchor)` in docs/
// and the READMEs points to a file that exists and, with an anchor, to one of its headings;
// every section the code cites (`docs/x.md, "Heading"`) is a heading or a bold label in that
// file. Exit 1 on a broken one. Usage: node scripts/check-docs.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && existsSync(join(root, file)));
const pages = tracked.filter(
  (file) => /^(docs\/.*|README|libs\/leaf\/README|libs\/leaf\/CHANGELOG)\.md$/.test(file) || file === 'README.md',
);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorCache = new Map();
function anchors(file) {
  if (!anchorCache.has(file)) {
    const seen = new Map();
    const set = new Set();
    let fence = false;
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
      if (/^\s*```/.test(line)) fence = !fence;
      const heading = !fence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!heading) continue;
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      set.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, set);
  }
  return anchorCache.get(file);
}

const problems = [];
let links = 0;
for (const page of pages) {
  const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  // The whole parenthesis: a target with a space is no link in Markdown unless what follows
  // the space is a title ("…", '…' or (…)), and `(docs/x.md, "Heading")` is a broken one.
  for (const [, inside] of text.matchAll(/\]\(([^)]*)\)/g)) {
    const [, target, rest] = /^\s*(\S*)\s*([\s\S]*)$/.exec(inside);
    if (/^[a-z]+:/i.test(target)) continue;
    links++;
    if (target === '' || (rest !== '' && !/^("[^"]*"|'[^']*'|\([^)]*\))$/.test(rest))) {
      problems.push(`${page}: not a link target: (${inside})`);
      continue;
    }
    const [path, anchor] = target.split('#');
    const file = path === '' ? page : normalize(join(dirname(page), path));
    if (!existsSync(join(root, file))) {
      problems.push(`${page}: link to a missing file: ${target}`);
      continue;
    }
    if (anchor === undefined || statSync(join(root, file)).isDirectory()) continue;
    if (!file.endsWith('.md')) continue;
    if (!anchors(file).has(decodeURIComponent(anchor))) {
      problems.push(`${page}: no heading for the anchor: ${target}`);
    }
  }
}

// Sections the code cites: docs/x.md, "Heading" (or *Heading*, or ("Heading"), across comment lines).
const norm = (s) => s.toLowerCase().replace(/[`*_]/g, '').replace(/\s+/g, ' ').trim();
const labelCache = new Map();
function labels(file) {
  if (!labelCache.has(file)) {
    const text = readFileSync(join(root, file), 'utf8');
    const found = [...text.matchAll(/^#{1,6}\s+(.*)$/gm)].map((m) => norm(m[1]));
    for (const [, bold] of text.matchAll(/\*\*([^*]+)\*\*/g)) found.push(norm(bold).replace(/[.:]$/, ''));
    labelCache.set(file, found);
  }
  return labelCache.get(file);
}
let cites = 0;
const cite = /docs\/([a-z-]+\.md)[,:]?\s*\(?\s*["*\u201c]([^"*\u201d]{2,120})["*\u201d]/g;
for (const file of tracked) {
  if (file.startsWith('docs/') || !/\.(ts|js|mjs|sh|ya?ml|md)$|Dockerfile$/.test(file)) continue;
  if (file.startsWith('dist/') || file.includes('/dist/') || file === 'scripts/check-docs.mjs') continue;
  const text = readFileSync(join(root, file), 'utf8').replace(/\n\s*(\*|\/\/|#)\s*/g, ' ');
  for (const [, doc, heading] of text.matchAll(cite)) {
    cites++;
    const target = `docs/${doc}`;
    if (!existsSync(join(root, target))) {
      problems.push(`${file}: cites a missing page: ${target}, "${heading}"`);
      continue;
    }
    const want = norm(heading);
    if (!labels(target).some((label) => label.includes(want) || (label.length > 8 && want.startsWith(label)))) {
      problems.push(`${file}: cites a section ${target} does not have: "${heading}"`);
    }
  }
}

for (const problem of problems) console.log(problem);
console.log(`${pages.length} pages, ${links} relative links, ${cites} sections cited by the code: ${problems.length} broken`);
process.exit(problems.length === 0 ? 0 : 1);
