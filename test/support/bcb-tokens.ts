import assert from 'node:assert/strict';
import type { TestClient } from '../factories.ts';
import type { TestApp } from '../harness.ts';

/** Headers of `client` (its certificate) with a token holding only `scope` (OAuth client credentials). */
export async function headersWithScope(t: TestApp, client: TestClient, scope: string): Promise<Record<string, string>> {
  const { authorization: _a, ...cert } = client.headers;
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { ...cert, authorization: basic }, payload: { grant_type: 'client_credentials', scope } });
  assert.equal(res.statusCode, 200, res.body);
  return { ...cert, authorization: `Bearer ${res.json<{ access_token: string }>().access_token}` };
}
