/**
 * What the README test reads from Markdown: shell blocks split into commands and the outputs
 * they show, tables by their heading, relative links and heading anchors.
 */

/** Put on the line before a fence: the block is not run, its commands are checked instead. */
export const NOT_RUN = /^<!--\s*readme-test: not run\b(.*)-->\s*$/;

export interface Segment {
  /** 1-based line of the segment's first command line in its file. */
  readonly line: number;
  /** Shell text, comments included (bash ignores them). */
  readonly command: string;
  /** The JSON document shown in `# ...` lines after the command, if any. */
  readonly expected?: unknown;
}

export interface ShellBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The nearest `##` heading above the block. */
  readonly section: string;
  /** The reason given by a NOT_RUN marker, or null when the block runs. */
  readonly notRun: string | null;
  readonly segments: readonly Segment[];
}

const FENCE = /^```(sh|bash|shell)\s*$/;

/** Every shell block of a Markdown file, in order. */
export function shellBlocks(file: string, markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      const end = lines.indexOf('```', i + 1);
      if (end < 0) throw new Error(`${file}:${i + 1}: a code fence is never closed`);
      if (FENCE.test(line)) {
        const marker = previousNonBlank(lines, i);
        const notRun = NOT_RUN.exec(marker);
        const body = lines.slice(i + 1, end);
        blocks.push({ file, line: i + 1, section, notRun: notRun ? notRun[1]!.trim() : null, segments: segments(file, body, i + 2) });
      }
      i = end;
      continue;
    }
    const heading = /^##\s+(.*)$/.exec(line);
    if (heading) section = heading[1]!.trim();
  }
  return blocks;
}

function previousNonBlank(lines: string[], index: number): string {
  for (let i = index - 1; i >= 0; i--) if (lines[i]!.trim() !== '') return lines[i]!;
  return '';
}

/**
 * Splits a block into commands, each ending where the output it shows begins: a `# {` or `# [`
 * line, continued over the following `# ` lines until the JSON is whole.
 */
function segments(file: string, body: string[], firstLine: number): Segment[] {
  const result: Segment[] = [];
  let command: string[] = [];
  let start = firstLine;
  for (let i = 0; i < body.length; i++) {
    const line = body[i]!;
    if (!/^# [[{]/.test(line)) {
      if (command.length === 0) start = firstLine + i;
      command.push(line);
      continue;
    }
    let text = line.slice(2);
    let expected: unknown;
    for (;;) {
      try {
        expected = JSON.parse(text);
        break;
      } catch {
        const next = body[i + 1];
        if (next === undefined || !next.startsWith('#')) {
          throw new Error(`${file}:${firstLine + i}: the output shown is not JSON: ${text.slice(0, 200)}`);
        }
        text += `\n${next.replace(/^# ?/, '')}`;
        i++;
      }
    }
    if (command.every((l) => l.trim() === '' || l.trimStart().startsWith('#'))) {
      throw new Error(`${file}:${firstLine + i}: an output is shown with no command before it`);
    }
    result.push({ line: start, command: command.join('\n'), expected });
    command = [];
  }
  if (command.some((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))) {
    result.push({ line: start, command: command.join('\n') });
  }
  return result;
}

/** The rows of the first table under the heading named `heading`, cells trimmed. */
export function tableUnder(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const at = lines.findIndex((l) => /^#{2,4}\s/.test(l) && l.replace(/^#+\s*/, '').trim() === heading);
  if (at < 0) throw new Error(`no heading "${heading}"`);
  const rows: string[][] = [];
  for (let i = at + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,4}\s/.test(line)) break;
    if (!line.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    if (/^\|[\s|:-]+\|$/.test(line)) continue;
    rows.push(splitRow(line));
  }
  if (rows.length < 2) throw new Error(`no table under "${heading}"`);
  return rows.slice(1);
}

/** Splits a table row on the pipes outside backticks. */
function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let code = false;
  for (const ch of line.slice(1, line.endsWith('|') ? -1 : undefined)) {
    if (ch === '`') code = !code;
    if (ch === '|' && !code) {
      cells.push(cell.trim());
      cell = '';
    } else cell += ch;
  }
  cells.push(cell.trim());
  return cells;
}

/** Texts in backticks, in order, outside fenced blocks. */
export const codeSpans = (text: string): string[] =>
  [...text.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Links `[text](target)` outside code, with their lines. */
export function links(markdown: string): Link[] {
  const result: Link[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) result.push({ line: i + 1, target: match[1]! });
  });
  return result;
}

/** GitHub's anchors for a file's headings (lower case, punctuation dropped, spaces as dashes). */
export function anchors(markdown: string): Set<string> {
  const result = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}
