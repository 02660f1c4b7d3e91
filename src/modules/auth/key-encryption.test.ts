import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../../config.ts';
import { KEY_FILE_NAME, resolveKeyEncryptionKey, seal, unseal } from './key-encryption.ts';

describe('seal and unseal (AES-256-GCM, the kid as additional data)', () => {
  it('open what they sealed, and nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.string({ minLength: 1, maxLength: 64 }), fc.string({ maxLength: 500 }), (bytes, kid, text) => {
        const kek = Buffer.from(bytes);
        const sealed = seal(kek, kid, text);
        assert.equal(unseal(kek, kid, sealed), text);
        assert.notEqual(seal(kek, kid, text), sealed, 'a fresh IV every time');
        const other = Buffer.from(kek);
        other[0]! ^= 1;
        assert.throws(() => unseal(other, kid, sealed), /does not open/);
        assert.throws(() => unseal(kek, `${kid}.`, sealed), /does not open/);
      }),
      { numRuns: 50 },
    );
  });

  it('refuse a format they do not know', () => {
    const kek = randomBytes(32);
    for (const sealed of ['', 'v2.a.b.c', 'v1.a.b', 'v1.a.b.c.d', 'plain']) assert.throws(() => unseal(kek, 'k', sealed), /format|does not open/, sealed);
  });
});

describe('resolveKeyEncryptionKey', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'pix-kek-test-'));
    dirs.push(dir);
    return dir;
  };
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const sandbox = (dataDir: string) => ({ keyEncryptionKey: undefined, dataDir, mode: 'sandbox' as const });

  it('KEY_ENCRYPTION_KEY when given: nothing is written', () => {
    const dataDir = join(tempDir(), 'data');
    const key = randomBytes(32);
    assert.deepEqual(resolveKeyEncryptionKey({ keyEncryptionKey: key, dataDir, mode: 'production' }), { key, source: 'KEY_ENCRYPTION_KEY' });
    assert.throws(() => statSync(dataDir), /ENOENT/);
  });

  it('in sandbox mode without it, generated once under DATA_DIR, readable by its owner only, and the same at every start', () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const first = resolveKeyEncryptionKey(sandbox(dataDir));
    const file = join(dataDir, KEY_FILE_NAME);
    assert.equal(first.source, file);
    assert.equal(first.key.length, 32);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dataDir), [KEY_FILE_NAME], 'no draft left behind');
    assert.deepEqual(resolveKeyEncryptionKey(sandbox(dataDir)).key, first.key);
  });

  it('processes starting at once on one DATA_DIR all end up with the same key', async () => {
    const dataDir = tempDir();
    const script = `import('${new URL('./key-encryption.ts', import.meta.url).href}').then((m) => process.stdout.write(m.resolveKeyEncryptionKey({ dataDir: ${JSON.stringify(dataDir)}, mode: 'sandbox' }).key.toString('base64')))`;
    const keys = await Promise.all(
      Array.from({ length: 4 }, () =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
        }),
      ),
    );
    assert.equal(new Set(keys).size, 1, keys.join(' '));
    assert.equal(keys[0], readFileSync(join(dataDir, KEY_FILE_NAME), 'utf8').trim());
    assert.deepEqual(readdirSync(dataDir), [KEY_FILE_NAME]);
  });

  it('a file that holds no key, or a DATA_DIR that cannot be written, is one line naming the variable and the file', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, KEY_FILE_NAME), 'not a key\n');
    const blocked = join(tempDir(), 'a-file');
    writeFileSync(blocked, '');
    for (const [dir, message] of [
      [dataDir, /^KEY_ENCRYPTION_KEY is unset and .*key-encryption-key does not hold 32 bytes in base64$/],
      [blocked, /^KEY_ENCRYPTION_KEY is unset and .*a-file\/key-encryption-key cannot be read or written: /],
    ] as const) {
      assert.throws(() => resolveKeyEncryptionKey(sandbox(dir)), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /\n/);
        return true;
      });
    }
  });

  it('never generated in production', () => {
    const dataDir = tempDir();
    assert.throws(() => resolveKeyEncryptionKey({ keyEncryptionKey: undefined, dataDir, mode: 'production' }), ConfigError);
    assert.deepEqual(readdirSync(dataDir), []);
  });
});
