import type { OperationExamples } from '../../http/openapi-examples.ts';

const clock = { now: '2026-11-25T15:30:12.345Z', offsetSeconds: 86_400 };
const fault = {
  id: 3,
  kind: 'webhook',
  effect: 'status',
  urlPrefix: 'https://erp.padaria.example.com/webhooks/',
  pixKey: null,
  status: 503,
  delayMs: null,
  reason: null,
  remaining: 2,
  stage: null,
  createdAt: '2026-11-24T15:30:12.345Z',
};

/** The examples of the sandbox's controls (the test clock, faults, the inbox), by operationId. */
export const CONTROLS_EXAMPLES: Record<string, OperationExamples> = {
  sandboxGetClock: { responses: { 200: clock } },
  sandboxAdvanceClock: {
    body: { to: 'next-event' },
    responses: {
      200: {
        ...clock,
        event: {
          at: '2026-11-25T03:00:00.000Z',
          kind: 'settlement-slot',
          description: "The payer's PSP settles the recurring charge 3136957d93134f2184b369e8f1c0729d (99.90, attempt AGND of 2026-11-25) in the morning's slot (00:00 to 08:00)",
        },
        steps: 1,
      },
    },
    errors: { 400: 'CLOCK_BACKWARDS', 409: 'NO_NEXT_EVENT' },
  },
  sandboxResetClock: { responses: { 200: { now: '2026-11-24T15:30:00.000Z', offsetSeconds: 0 } } },
  sandboxSetFault: {
    body: { kind: 'webhook', effect: 'status', urlPrefix: 'https://erp.padaria.example.com/webhooks/', status: 503, count: 2 },
    responses: { 201: fault },
    errors: { 409: 'TOO_MANY_FAULTS' },
  },
  sandboxListFaults: {
    responses: {
      200: {
        data: [
          fault,
          { ...fault, id: 4, kind: 'settlement', effect: 'reject', urlPrefix: null, pixKey: 'fornecedor@example.com', status: null, reason: 'AC03', remaining: null },
          { ...fault, id: 5, kind: 'automatico', effect: 'reject', urlPrefix: null, status: null, reason: 'AM04', remaining: 1, stage: 'attempt' },
          { ...fault, id: 6, effect: 'duplicate', status: null, remaining: null },
          { ...fault, id: 7, effect: 'late', urlPrefix: 'https://erp.padaria.example.com/webhooks/pix', status: null, delayMs: 30_000, remaining: 1 },
        ],
      },
    },
  },
  sandboxClearFaults: {},
  sandboxClearFault: { params: { id: '3' }, errors: { 404: 'FAULT_NOT_FOUND' } },
  sandboxInboxReceive: { params: { name: 'mine' }, body: { type: 'cash_in', data: { amount: 25 } }, responses: { 200: { received: true, id: 12 } } },
  sandboxInboxReceiveAtPath: {
    params: { name: 'mine', path: 'pix' },
    body: { pix: [{ endToEndId: 'E12345678202611241530abcdefghijk', txid: 'pedido20261124000000000042', valor: '25.00', horario: '2026-11-24T15:30:00.000Z' }] },
    responses: { 200: { received: true, id: 13 } },
  },
  sandboxInboxList: {
    params: { name: 'mine' },
    responses: {
      200: {
        data: [
          {
            id: 12,
            receivedAt: '2026-11-24T15:30:12.345Z',
            method: 'POST',
            path: '',
            headers: { 'content-type': 'application/json', 'webhook-id': 'msg_5f0c3a9b2d1e4f6a8b7c9d0e1f2a3b4c' },
            body: '{"type":"cash_in","data":{"amount":25}}',
            status: 200,
          },
        ],
      },
    },
  },
  sandboxInboxClear: { params: { name: 'mine' } },
};
