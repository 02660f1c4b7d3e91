import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import {
  createRecLocation,
  getRecLocation,
  listRecLocationsOf,
  recLocationUrl,
  unlinkRecLocation,
  type RecLocationRow,
} from '../../../modules/recurrences/locations.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { bcbListAnswer, bcbListQuery, bcbPaginacao } from '../schemas.ts';

const TAGS = ['API Pix: locrec'];
const WRITE = { notFound: 'PayloadLocationRecNaoEncontrado' } as const;
const READ = { invalid: 'PayloadLocationRecConsultaInvalida', notFound: 'PayloadLocationRecNaoEncontrado' } as const;

const IdParams = Type.Object({ id: Type.String({ maxLength: 20, description: 'Id da location' }) });

/** BCB's `PayloadLocationRecCompleta`: `idRec` while it serves a recurrence. */
const LocRec = Type.Object({
  id: Type.Integer({ description: 'Id da location' }),
  location: Type.String({ description: 'Localização do payload (sem esquema): host/qr/v2/rec/{token}' }),
  tipo: Type.Literal('rec'),
  criacao: Type.String({ format: 'date-time' }),
  idRec: Type.Optional(Type.String({ description: 'A recorrência que a location serve' })),
});

function locRecView(publicUrl: string, row: RecLocationRow) {
  return {
    id: Number(row.id),
    location: recLocationUrl(publicUrl, row.token),
    tipo: 'rec' as const,
    criacao: row.created_at.toISOString(),
    ...(row.id_rec === null ? {} : { idRec: row.id_rec }),
  };
}

function postLocRec(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/locrec',
      tags: TAGS,
      scope: 'payloadlocationrec.write',
      operationId: 'bcbPostLocRec',
      summary: 'Criar location do payload de recorrência',
      description: 'Uma location livre, que uma recorrência toma ao nomeá-la em loc (POST ou PATCH /rec).',
      request: { body: Type.Object({ tipo: Type.Literal('rec') }, { additionalProperties: false }) },
      answers: [201, LocRec],
      problems: [400, 403, 503],
      errors: WRITE,
    },
    async (request, reply) => {
      const view = locRecView(deps.config.publicUrl, await createRecLocation(deps.db, request.accountId, deps.clock.now()));
      return reply.status(201).header('location', view.location).send(view);
    },
  );
}

const LocRecListQuery = bcbListQuery({
  idRecPresente: Type.Optional(Type.Boolean({ description: 'Só locations com (true) ou sem (false) recorrência' })),
  convenio: Type.Optional(Type.String({ maxLength: 60, description: 'Só locations de recorrências desse convênio' })),
});
const LocRecConsultadas = bcbListAnswer({ idRecPresente: Type.Boolean(), recebedor: Type.Object({ convenio: Type.String() }) }, 'loc', LocRec);

function listLocRecs(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/locrec',
      tags: TAGS,
      scope: 'payloadlocationrec.read',
      operationId: 'bcbListLocRec',
      summary: 'Consultar locations de recorrência cadastradas',
      description: 'Locations criadas entre inicio e fim (no máximo 31 dias), mais novas primeiro.',
      request: { querystring: LocRecListQuery },
      answers: [200, LocRecConsultadas],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => {
      const { parametros, rows } = await listRecLocationsOf(deps, request.accountId, request.query);
      return { parametros: { ...parametros, paginacao: bcbPaginacao(parametros.paginacao) }, loc: rows.map((row) => locRecView(deps.config.publicUrl, row)) };
    },
  );
}

function getLocRec(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/locrec/:id',
      tags: TAGS,
      scope: 'payloadlocationrec.read',
      operationId: 'bcbGetLocRec',
      summary: 'Recuperar location do payload de recorrência',
      request: { params: IdParams },
      answers: [200, LocRec],
      problems: [403, 404, 503],
      errors: READ,
    },
    async (request) => locRecView(deps.config.publicUrl, await getRecLocation(deps.db, request.accountId, request.params.id)),
  );
}

function unlinkLocRec(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'DELETE',
      url: '/locrec/:id/idRec',
      tags: TAGS,
      scope: 'payloadlocationrec.write',
      operationId: 'bcbDeleteLocRecIdRec',
      summary: 'Desvincular uma recorrência de uma location',
      description: 'A location deixa de apresentar idRec, e a recorrência deixa de apresentar loc; o status da recorrência não muda.',
      request: { params: IdParams },
      answers: [200, LocRec],
      problems: [403, 404, 503],
      errors: WRITE,
    },
    async (request) => locRecView(deps.config.publicUrl, await unlinkRecLocation(deps.db, request.accountId, request.params.id)),
  );
}

/** BCB's payload locations of recurrences (`locrec`). */
export const locrecOperations =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    postLocRec(app, deps);
    listLocRecs(app, deps);
    getLocRec(app, deps);
    unlinkLocRec(app, deps);
  };
