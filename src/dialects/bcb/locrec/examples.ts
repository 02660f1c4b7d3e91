import { examplePage } from '../../../http/example-page.ts';
import type { OperationExamples } from '../../../http/openapi-examples.ts';

const locrec = { id: 12069, location: 'pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002', tipo: 'rec', criacao: '2026-11-24T12:38:28.774Z' };
const problems = { 404: 'PayloadLocationRecNaoEncontrado' } as const;

/** The examples of BCB's `locrec` operations. */
export const LOCREC_EXAMPLES: Record<string, OperationExamples> = {
  bcbPostLocRec: { body: { tipo: 'rec' }, responses: { 201: locrec } },
  bcbListLocRec: {
    params: { inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z' },
    responses: { 200: examplePage({ inicio: '2026-11-24T00:00:00.000Z', fim: '2026-11-24T23:59:59.000Z' }, 'loc', [locrec]) },
    problems: { 400: 'PayloadLocationRecConsultaInvalida' },
  },
  bcbGetLocRec: { params: { id: '12069' }, responses: { 200: locrec }, problems },
  bcbDeleteLocRecIdRec: { params: { id: '12069' }, responses: { 200: locrec }, problems },
};
