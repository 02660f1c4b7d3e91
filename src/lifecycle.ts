/**
 * What a command takes while it starts (the database and its lock, listeners, the worker), so
 * that a failure at any step releases what the earlier steps took, and a stop releases it all,
 * in the reverse order. Without it, a port in use left the worker running and the embedded
 * database locked, and the process never exited (docs/decisions/0005-start-up-and-demo-files.md).
 */
export class Resources {
  readonly #releases: { name: string; release: () => Promise<unknown> | unknown }[] = [];
  #released: Promise<unknown[]> | undefined;

  /** Registers how to release something just taken; releases run last-taken first. */
  add(name: string, release: () => Promise<unknown> | unknown): void {
    if (this.#released) throw new Error(`${name} was taken after the resources were released`);
    this.#releases.push({ name, release });
  }

  /**
   * Releases everything, each step even when an earlier one failed; resolves with the failures
   * (named). Calling it again waits for the first call.
   */
  release(): Promise<unknown[]> {
    this.#released ??= (async () => {
      const failures: unknown[] = [];
      for (const { name, release } of this.#releases.reverse()) {
        try {
          await release();
        } catch (error) {
          failures.push(new Error(`releasing ${name}: ${(error as Error).message}`, { cause: error }));
        }
      }
      return failures;
    })();
    return this.#released;
  }
}

/** A start that cannot go on; its message is the one line printed, saying what to do. */
export class StartFailure extends Error {
  override name = 'StartFailure';
}

/** The host:port a listen error names, as an operator types it. */
const hostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * Turns a listen error into what to do about it, naming the variables that choose the address
 * (PORT and HOST, or ADMIN_PORT and ADMIN_HOST).
 */
export function listenFailure(error: unknown, listener: { port: number; host: string; portVariable: string; hostVariable: string }): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const { port, host, portVariable, hostVariable } = listener;
  const at = hostPort(host, port);
  switch (code) {
    case 'EADDRINUSE':
      return new StartFailure(`${portVariable} ${port} is already in use on ${host}: stop the process that holds it, or set ${portVariable} to a free port`);
    case 'EACCES':
      return new StartFailure(`${portVariable} ${port} needs privileges on ${host} (EACCES): set ${portVariable} to a port above 1023`);
    case 'EADDRNOTAVAIL':
      return new StartFailure(`${hostVariable} ${host} is not an address of this machine (EADDRNOTAVAIL): set ${hostVariable} to one of its addresses`);
    default:
      return new StartFailure(`cannot listen on ${at} (${code ?? (error as Error).message}): check ${hostVariable} and ${portVariable}`);
  }
}
