// What the measuring and demo scripts share: child processes that print "listening on ...", a
// free port, and a database's URL on the server.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export const SERVICE_MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

/** `server` (a PostgreSQL URL) with another database name. */
export function databaseUrl(server: string, name: string): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A port nobody listens on now (for processes that must keep their port across restarts). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts a Node process and resolves with it and the port it printed ("listening on ..."). */
export async function startChild(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const match = /listening on (?:\S*:)?(\d+)\b/.exec(out);
      if (!match) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${args.at(-1)} exited ${code}`)));
  });
  return { child, port };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
