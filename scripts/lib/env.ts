// The measuring scripts' settings from the environment, each with its default.

/** The PostgreSQL server on which the measuring scripts create their fresh databases. */
export const DATABASE_SERVER = process.env.DATABASE_SERVER ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The number in the environment variable `name`, or `fallback` when it is unset. */
export const envNumber = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
