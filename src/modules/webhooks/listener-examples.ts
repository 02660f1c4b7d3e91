import type { OperationExamples } from '../../http/openapi-examples.ts';

const ID = 'uZjCIsEjBfVgDqB4EQRoiQ';
const listener = { id: ID, name: 'default', url: `https://sandbox.example.com/sandbox/listen/${ID}`, kinds: ['events', 'pix'] };
const signed = {
  'content-type': 'application/json',
  'user-agent': 'pix-api-webhooks/1.0',
  'webhook-id': 'msg_6da70c7a91904b13bf8bebc940b6df62',
  'webhook-timestamp': '1795569672',
  'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
};
const received = '{"type":"RECEIVE","data":{"id":42,"endToEndId":"E60746948202611241522xYz0aBc1dEf","status":"LIQUIDATED"}}';

/** The examples of the listeners of `pix-api listen`, by operationId. */
export const LISTENER_EXAMPLES: Record<string, OperationExamples> = {
  sandboxListenerStart: {
    body: { accountId: 1, name: 'default', kinds: ['events', 'pix'], mutualTls: false },
    responses: { 201: { ...listener, replaced: [{ kind: 'pix', chave: '12345678909', url: null }], clientCertificate: null } },
    errors: { 404: 'ACCOUNT_NOT_FOUND', 422: 'TOO_MANY_LISTENERS' },
  },
  sandboxListenerList: {
    params: { accountId: 1 },
    responses: { 200: { data: [{ ...listener, connected: true, seenAt: '2026-11-24T15:30:12.345Z', createdAt: '2026-11-24T15:20:00.000Z' }] } },
  },
  sandboxListenerTake: {
    params: { id: ID, waitMs: 20_000 },
    responses: { 200: { data: [{ id: 7, path: '', headers: signed, body: received, receivedAt: '2026-11-24T15:30:12.345Z' }] } },
    errors: { 404: 'LISTENER_NOT_FOUND' },
  },
  sandboxListenerAnswer: {
    params: { id: ID, arrivalId: 7 },
    body: { status: 200, durationMs: 3 },
    errors: { 404: 'FORWARD_NOT_FOUND' },
  },
  sandboxListenerStop: { params: { id: ID }, errors: { 404: 'LISTENER_NOT_FOUND' } },
  sandboxListenerReceive: {
    params: { id: ID },
    body: JSON.parse(received) as unknown,
    responses: { 200: { forwarded: true, status: 200 } },
    errors: { 404: 'LISTENER_NOT_FOUND', 502: 'LOCAL_RECEIVER_REFUSED', 503: 'LISTENER_NOT_CONNECTED', 504: 'LISTENER_NO_ANSWER' },
  },
  sandboxListenerReceiveAtPath: {
    params: { id: ID, path: 'pix' },
    body: { pix: [{ endToEndId: 'E60746948202611241522xYz0aBc1dEf', txid: 'pedido20261124000000000042', valor: '25.00', horario: '2026-11-24T15:30:00.000Z' }] },
    responses: { 200: { forwarded: true, status: 200 } },
    errors: { 404: 'LISTENER_NOT_FOUND', 502: 'LOCAL_RECEIVER_REFUSED', 503: 'LISTENER_NOT_CONNECTED', 504: 'LISTENER_NO_ANSWER' },
  },
};
