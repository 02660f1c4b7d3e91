import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from './config.ts';
import type { Db } from './db/client.ts';
import { systemClock } from './lib/clock.ts';
import type { AccountAddress } from './db/schema.ts';
import { createAccount, linkCertificate, registerPixKey, rotateClientSecret, unlinkCertificate, updateAccount } from './modules/accounts/service.ts';
import { resolveKeyEncryptionKey } from './modules/auth/key-encryption.ts';
import { listSigningKeys, retireSigningKey, rotateSigningKey } from './modules/auth/signing-keys.ts';
import { SandboxControls } from './modules/controls/service.ts';

/** Operator commands: the same operations as /admin/*, run directly on the database. */
export const OPERATOR_USAGE = `Operator commands (same database as the service):
  accounts create --name NAME --document CPF_OR_CNPJ [--logradouro STREET] [--cidade CITY] [--uf UF] [--cep CEP]  (the address: all four or none)
  address set --account ID --logradouro STREET --cidade CITY --uf UF --cep CEP
  certificates link --account ID --pem-file FILE
  certificates unlink --account ID --fingerprint SHA256_HEX
  pix-keys add --account ID --type cpf|cnpj|email|phone|evp [--key KEY]
  client-secret rotate --account ID
  scopes limit --account ID --scopes SCOPE,SCOPE|all
  signing-keys list
  signing-keys rotate
  signing-keys retire --kid KID
  clock reset      (sandbox) business time back at the real time, for every process on the database`;

export class UsageError extends Error {
  override name = 'UsageError';
}

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function accountId(values: Record<string, string | undefined>): bigint {
  const raw = required(values, 'account');
  if (!/^[1-9]\d{0,17}$/.test(raw)) throw new UsageError('--account must be a numeric account id');
  return BigInt(raw);
}

function kid(values: Record<string, string | undefined>): string {
  const raw = required(values, 'kid');
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(raw)) throw new UsageError('--kid must be a key id as signing-keys list shows it');
  return raw;
}

const OPTIONS = {
  name: { type: 'string' },
  document: { type: 'string' },
  account: { type: 'string' },
  'pem-file': { type: 'string' },
  fingerprint: { type: 'string' },
  type: { type: 'string' },
  key: { type: 'string' },
  kid: { type: 'string' },
  scopes: { type: 'string' },
  logradouro: { type: 'string' },
  cidade: { type: 'string' },
  uf: { type: 'string' },
  cep: { type: 'string' },
} as const;

const isOption = (arg: string | undefined): boolean =>
  arg !== undefined && arg.startsWith('--') && Object.hasOwn(OPTIONS, arg.slice(2).split('=')[0]!);

/**
 * A value may begin with a dash: a key id is a JWK thumbprint in base64url, and 1 in 64 of them
 * does. parseArgs would call `--kid -x…` ambiguous, so each option is joined to the argument after
 * it unless that argument is itself one of our options (then the value is missing, as before).
 */
function joinValues(args: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (isOption(arg) && !arg.includes('=') && i + 1 < args.length && !isOption(args[i + 1])) {
      joined.push(`${arg}=${args[++i]}`);
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** parseArgs reports an unknown option, a stray argument or a missing value as a TypeError: bad usage. */
function parseOptions(args: string[]): Record<string, string | undefined> {
  try {
    return parseArgs({ args: joinValues(args), options: OPTIONS, strict: true }).values;
  } catch (error) {
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) {
      throw new UsageError(`${(error as Error).message}\n${OPERATOR_USAGE}`);
    }
    throw error;
  }
}

const ADDRESS_PARTS = ['logradouro', 'cidade', 'uf', 'cep'] as const;

/** The four parts of an address, all of them (`needed`) or none. */
function addressOf(values: Record<string, string | undefined>, needed: boolean): AccountAddress | undefined {
  if (!needed && ADDRESS_PARTS.every((part) => values[part] === undefined)) return undefined;
  const [logradouro, cidade, uf, cep] = ADDRESS_PARTS.map((part) => required(values, part)) as [string, string, string, string];
  return { logradouro, cidade, uf, cep };
}

function readPemFile(values: Record<string, string | undefined>): string {
  const file = required(values, 'pem-file');
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--pem-file ${file} cannot be read: ${(error as Error).message}`);
  }
}

/** Ids are bigint inside; JSON shows them as numbers, as the operator API does. */
const jsonReplacer = (_key: string, field: unknown) => (typeof field === 'bigint' ? Number(field) : field);

/** Runs one operator command and returns what it prints (JSON). */
export async function runOperatorCommand(db: Db, config: Config, args: string[]): Promise<string> {
  const [group, action, ...rest] = args;
  const values = parseOptions(rest);
  // Certificates are judged by the real clock: the CLI has no other.
  const deps = { db, ispb: config.pspIspb, clock: systemClock };
  let result: unknown;
  switch (`${group} ${action}`) {
    case 'accounts create':
      result = await createAccount(deps, { name: required(values, 'name'), document: required(values, 'document'), address: addressOf(values, false) });
      break;
    case 'address set':
      result = await updateAccount(deps, accountId(values), { address: addressOf(values, true) });
      break;
    case 'certificates link':
      result = await linkCertificate(deps, accountId(values), readPemFile(values));
      break;
    case 'certificates unlink':
      await unlinkCertificate(deps, accountId(values), required(values, 'fingerprint'));
      result = { unlinked: values.fingerprint };
      break;
    case 'pix-keys add':
      result = await registerPixKey(deps, accountId(values), { type: required(values, 'type'), key: values.key });
      break;
    case 'client-secret rotate':
      result = await rotateClientSecret(deps, accountId(values));
      break;
    case 'scopes limit': {
      const list = required(values, 'scopes');
      result = await updateAccount(deps, accountId(values), { scopes: list === 'all' ? null : list.split(',').map((s) => s.trim()).filter(Boolean) });
      break;
    }
    case 'signing-keys list':
      result = { data: await listSigningKeys(db) };
      break;
    case 'signing-keys rotate':
      result = await rotateSigningKey(db, resolveKeyEncryptionKey(config));
      break;
    case 'signing-keys retire':
      result = await retireSigningKey(db, kid(values));
      break;
    case 'clock reset': {
      if (config.mode !== 'sandbox') throw new UsageError('clock reset: the test clock is the sandbox\'s (PIX_MODE=sandbox)');
      const controls = new SandboxControls(db, systemClock, { publicUrl: config.publicUrl });
      result = await controls.reset();
      break;
    }
    default:
      throw new UsageError(`unknown command "${args.join(' ')}"\n${OPERATOR_USAGE}`);
  }
  return JSON.stringify(result, jsonReplacer, 2);
}
