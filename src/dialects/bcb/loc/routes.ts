import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import type { LinkedLocation } from '../../../modules/locations/repo.ts';
import { createLocation, getLocation, listLocationsOf, locationQrCode, locationUrl, unlinkLocation } from '../../../modules/locations/service.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { BcbLoc, BcbPaginacao, BcbTipoCob, bcbListQuery, bcbPaginacao } from '../schemas.ts';

const TAGS = ['API Pix: loc'];
const WRITE = { invalid: 'PayloadLocationOperacaoInvalida', notFound: 'PayloadLocationNaoEncontrado' } as const;
const READ = { invalid: 'PayloadLocationConsultaInvalida', notFound: 'PayloadLocationNaoEncontrado' } as const;

const IdParams = Type.Object({ id: Type.String({ maxLength: 20, description: 'Id da location' }) });

/** BCB's `PayloadLocationCompleta`: with `txid` while it serves a charge. */
function locView(publicUrl: string, row: Omit<LinkedLocation, 'txid' | 'charge_id'> & { txid?: string | null }) {
  return {
    id: Number(row.id),
    ...(row.txid ? { txid: row.txid } : {}),
    location: locationUrl(publicUrl, row),
    tipoCob: row.tipo_cob,
    criacao: row.created_at.toISOString(),
  };
}

function postLoc(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/loc',
      tags: TAGS,
      scope: 'payloadlocation.write',
      operationId: 'bcbPostLoc',
      summary: 'Criar location do payload',
      request: { body: Type.Object({ tipoCob: BcbTipoCob }, { additionalProperties: false }) },
      answers: [201, BcbLoc],
      problems: [400, 403, 503],
      errors: WRITE,
    },
    async (request, reply) => {
      const row = await createLocation(deps.db, request.accountId, request.body.tipoCob, deps.clock.now());
      const view = locView(deps.config.publicUrl, row);
      return reply.status(201).header('location', view.location).send(view);
    },
  );
}

const LocListQuery = bcbListQuery({
  txIdPresente: Type.Optional(Type.Boolean({ description: 'Só locations com (true) ou sem (false) cobrança' })),
  tipoCob: Type.Optional(BcbTipoCob),
});
const PayloadLocationConsultadas = Type.Object({
  parametros: Type.Object({
    inicio: Type.String({ format: 'date-time' }),
    fim: Type.String({ format: 'date-time' }),
    txIdPresente: Type.Optional(Type.Boolean()),
    tipoCob: Type.Optional(BcbTipoCob),
    paginacao: BcbPaginacao,
  }),
  loc: Type.Array(BcbLoc),
});

function listLocs(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/loc',
      tags: TAGS,
      scope: 'payloadlocation.read',
      operationId: 'bcbListLoc',
      summary: 'Consultar locations cadastradas',
      description: 'Locations criadas entre inicio e fim (no máximo 31 dias), mais novas primeiro.',
      request: { querystring: LocListQuery },
      answers: [200, PayloadLocationConsultadas],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => {
      const { parametros, rows } = await listLocationsOf(deps, request.accountId, request.query);
      return { parametros: { ...parametros, paginacao: bcbPaginacao(parametros.paginacao) }, loc: rows.map((row) => locView(deps.config.publicUrl, row)) };
    },
  );
}

function getLoc(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/loc/:id',
      tags: TAGS,
      scope: 'payloadlocation.read',
      operationId: 'bcbGetLoc',
      summary: 'Recuperar location do payload',
      request: { params: IdParams },
      answers: [200, BcbLoc],
      problems: [403, 404, 503],
      errors: READ,
    },
    async (request) => locView(deps.config.publicUrl, await getLocation(deps.db, request.accountId, request.params.id)),
  );
}

function unlinkLoc(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'DELETE',
      url: '/loc/:id/txid',
      tags: TAGS,
      scope: 'payloadlocation.write',
      operationId: 'bcbDeleteLocTxid',
      summary: 'Desvincular uma cobrança de uma location',
      description:
        'A location deixa de apresentar um txid, e a cobrança deixa de apresentar loc, location e pixCopiaECola; o status da cobrança não muda. ' +
        'A location pode então ser usada por outra cobrança (loc.id).',
      request: { params: IdParams },
      answers: [200, BcbLoc],
      problems: [403, 404, 503],
      errors: WRITE,
    },
    async (request) => locView(deps.config.publicUrl, await unlinkLocation(deps.db, request.accountId, request.params.id)),
  );
}

function locQrCode(app: RouteApp, deps: BcbDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/loc/:id/qrcode',
      tags: TAGS,
      scope: 'payloadlocation.read',
      operationId: 'bcbGetLocQrcode',
      summary: 'O BR Code dinâmico da location e a imagem do seu QR Code',
      description: 'qrcode: o Pix Copia e Cola (o da cobrança vinculada); imagemQrcode: PNG em data URI.',
      request: { params: IdParams },
      answers: [200, Type.Object({ qrcode: Type.String(), imagemQrcode: Type.String({ pattern: '^data:image/png;base64,' }) })],
      problems: [403, 404, 503],
      errors: READ,
    },
    async (request) => locationQrCode({ db: deps.db, publicUrl: deps.config.publicUrl }, request.accountId, request.params.id),
  );
}

/** BCB's payload locations (`loc`) and their QR code. */
export const locOperations =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    postLoc(app, deps);
    listLocs(app, deps);
    getLoc(app, deps);
    unlinkLoc(app, deps);
    locQrCode(app, deps);
  };
