import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a command in a block the README test does not run claims: that the npm script, the CLI
 * command, the file and the environment variables it names exist. Returns the problems found.
 */

export const ROOT = new URL('../..', import.meta.url).pathname;

export const readRepo = (path: string) => readFileSync(join(ROOT, path), 'utf8');

export const packageJson = JSON.parse(readRepo('package.json')) as { scripts: Record<string, string>; bin: Record<string, string> };

/** The text of the sources that read the environment: src, scripts, test and CI (this test's own files left out). */
const sources: string = (() => {
  const texts: string[] = [readRepo('.ci/run')];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = join(dir, name);
      if (path.startsWith('test/readme')) continue;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (/\.(ts|js|sql)$/.test(name)) texts.push(readRepo(path));
    }
  };
  ['src', 'scripts', 'test', 'bin'].forEach(walk);
  return texts.join('\n');
})();

/** True when some source reads `name` from the environment. */
export const readFromEnvironment = (name: string) =>
  new RegExp(`(process\\.)?env(\\.${name}\\b|\\[['"]${name}['"]\\])|\\b${name}=|['"]${name}['"]`).test(sources);

/** A usage text's commands ("serve", "accounts create", ...) with the options each lists. */
export function usageCommands(usage: string): Map<string, { options: Set<string>; required: Set<string> }> {
  const commands = new Map<string, { options: Set<string>; required: Set<string> }>();
  for (const line of usage.split('\n')) {
    const match = /^ {2}(\S+)(.*)$/.exec(line);
    if (!match) continue;
    // "  serve            start the API ..." is one word and a description.
    const oneWord = match[2] === '' || /^ {2,}/.test(match[2]!);
    const second = oneWord ? null : /^ (\S+)(.*)$/.exec(match[2]!);
    const name = second ? `${match[1]} ${second[1]}` : match[1]!;
    // A one-word command may list its options after its description (`listen ... [--name NAME]`).
    const rest = second ? second[2]! : match[2]!;
    const optional = new Set([...rest.matchAll(/\[--([a-z-]+)/g)].map((m) => m[1]!));
    const options = new Set([...rest.matchAll(/--([a-z-]+)/g)].map((m) => m[1]!));
    commands.set(name, { options, required: new Set([...options].filter((o) => !optional.has(o))) });
  }
  return commands;
}

/** Splits shell text into simple commands: continuations joined, comments dropped, split on && ; |. */
export function simpleCommands(text: string): string[] {
  const joined = text.replace(/\\\n/g, ' ');
  const result: string[] = [];
  for (const raw of joined.split('\n')) {
    let line = '';
    let quote = '';
    for (const ch of raw) {
      if (quote) {
        if (ch === quote) quote = '';
      } else if (ch === "'" || ch === '"') quote = ch;
      else if (ch === '#') break;
      line += ch;
    }
    for (const part of line.split(/&&|;|\|/)) if (part.trim()) result.push(part.trim());
  }
  return result;
}

/** Words of a simple command, quotes removed (the blocks checked here quote nothing tricky). */
const words = (command: string) => [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);

export interface CommandContext {
  readonly configVariables: ReadonlySet<string>;
  readonly cli: ReadonlyMap<string, { options: Set<string>; required: Set<string> }>;
}

/** The problems with one simple command of a block that is not run; empty when it holds. */
export function checkCommand(command: string, context: CommandContext): string[] {
  const problems: string[] = [];
  const parts = words(command);
  while (parts.length && /^[A-Z][A-Z0-9_]*=/.test(parts[0]!)) {
    const name = parts.shift()!.split('=')[0]!;
    if (!context.configVariables.has(name) && !readFromEnvironment(name)) problems.push(`${name} is neither in the configuration table nor read by any source`);
  }
  const [program, ...args] = parts;
  switch (program) {
    case 'npm': {
      const [verb, ...rest] = args.filter((a) => !a.startsWith('-'));
      if (verb === 'install' || verb === 'ci') break;
      const script = verb === 'run' ? rest[0] : verb;
      if (!script || !(script in packageJson.scripts)) problems.push(`package.json has no script "${script}"`);
      break;
    }
    case 'npx': {
      const [bin, ...rest] = args;
      if (!bin || !(bin in packageJson.bin)) {
        problems.push(`package.json has no bin "${bin}"`);
        break;
      }
      problems.push(...checkCli(rest, context));
      break;
    }
    case 'bash':
      if (!args[0] || !existsSync(join(ROOT, args[0]))) problems.push(`no file ${args[0]}`);
      break;
    case 'node': {
      // `node <script> ...` or `node --test <file>`: the first word that is not an option is a file.
      const file = args.find((a) => !a.startsWith('-'));
      if (!file || !existsSync(join(ROOT, file))) problems.push(`no file ${file}`);
      break;
    }
    case 'openssl':
      break;
    default:
      problems.push(`the test does not know how to check "${program}": run the block, or teach test/readme/commands.ts`);
  }
  return problems;
}

function checkCli(args: string[], context: CommandContext): string[] {
  const name = args[0] && args[1] && context.cli.has(`${args[0]} ${args[1]}`) ? `${args[0]} ${args[1]}` : args[0];
  const usage = name ? context.cli.get(name) : undefined;
  if (!usage) return [`"pix-api ${args.slice(0, 2).join(' ')}" is not a command of src/main.ts or src/cli.ts`];
  const given = new Set(args.filter((a) => a.startsWith('--')).map((a) => a.slice(2)));
  const problems = [...given].filter((o) => !usage.options.has(o)).map((o) => `pix-api ${name} has no option --${o}`);
  problems.push(...[...usage.required].filter((o) => !given.has(o)).map((o) => `pix-api ${name} needs --${o}`));
  return problems;
}
