import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SANDBOX_CLIENT_DIRECTORY, webhookClientCertificate } from './client-certificate.ts';

describe('the client certificate of BCB callbacks', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-client-cert-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('sandbox without files: generated once under DATA_DIR (0600), the same for every process and start', async () => {
    const [a, b] = await Promise.all([
      webhookClientCertificate({ mode: 'sandbox', dataDir, webhookClient: undefined })(),
      webhookClientCertificate({ mode: 'sandbox', dataDir, webhookClient: undefined })(),
    ]);
    assert.ok(a && b);
    assert.equal(a.cert, b.cert);
    assert.equal(a.key, b.key);
    assert.ok(new X509Certificate(a.cert).checkPrivateKey(createPrivateKey(a.key)));
    assert.equal(statSync(join(dataDir, SANDBOX_CLIENT_DIRECTORY, 'client.pem')).mode & 0o777, 0o600);
    const again = await webhookClientCertificate({ mode: 'sandbox', dataDir, webhookClient: undefined })();
    assert.equal(again?.cert, a.cert);
  });

  it('production without files presents none', async () => {
    assert.equal(await webhookClientCertificate({ mode: 'production', dataDir, webhookClient: undefined })(), null);
  });
});
