import { spawn } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs the docs' commands in bash as a reader would in one terminal: each command sees the
 * variables and functions the earlier ones set (saved after each, since every command runs in
 * its own bash),
 * from the directory the service was started in, against the service's real port.
 */
export class ShellSession {
  readonly #dir: string;
  readonly #state: string;
  readonly #port: number;

  constructor(dir: string, port: number, env: Record<string, string>) {
    this.#dir = dir;
    this.#port = port;
    this.#state = join(dir, '.readme-test-state');
    const exports = Object.entries(env).map(([name, value]) => `export ${name}=${shellQuote(value)}`);
    writeFileSync(this.#state, `${exports.join('\n')}\n`);
  }

  /** Saves the variables set so far under `name`, for restore(). */
  save(name: string): void {
    copyFileSync(this.#state, `${this.#state}.${name}`);
  }

  restore(name: string): void {
    copyFileSync(`${this.#state}.${name}`, this.#state);
  }

  /** The docs say 127.0.0.1:8080 (or localhost:8080); the service listens on a free port. */
  asRun(command: string): string {
    return command.replace(/\b(127\.0\.0\.1|localhost):8080\b/g, `127.0.0.1:${this.#port}`);
  }

  /**
   * Runs one command. `set -e` and `pipefail` stop at the first failure, and curl is called with
   * --fail-with-body, so an HTTP error is a failure of the command that got it (with its body).
   */
  run(command: string, timeoutMs = 30_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const script = [
      'set -a',
      'source "$README_TEST_STATE"',
      "trap '{ export -p; declare -f; } > \"$README_TEST_STATE\"' EXIT",
      'set -e -o pipefail',
      'curl() { command curl --fail-with-body "$@"; }',
      this.asRun(command),
    ].join('\n');
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', script], {
        cwd: this.#dir,
        env: { README_TEST_STATE: this.#state, PATH: process.env.PATH ?? '/usr/bin:/bin' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', reject);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }
}

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
