import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { chargeQrCode, type ChargesDeps } from '../service.ts';
import { read, TxidParams } from './schemas.ts';

const QrImage = {
  description: 'The QR code of the BR Code',
  content: {
    'image/png': { schema: { type: 'string', format: 'binary' } },
    'image/svg+xml': { schema: { type: 'string' } },
  },
};

/** GET /cob/{txid}/qrcode */
export function getChargeQrCodeRoute(app: RouteApp, deps: ChargesDeps): void {
  app.get(
    '/cob/:txid/qrcode',
    {
      schema: {
        ...read,
        operationId: 'getChargeQrCode',
        summary: "The QR code image of a charge's BR Code",
        description: 'PNG (default, 300 px) or SVG, with error correction level M.',
        params: TxidParams,
        querystring: Type.Object({ format: Type.Optional(Type.Union([Type.Literal('png'), Type.Literal('svg')], { description: 'png (default) or svg' })) }, { additionalProperties: false }),
        response: { 200: QrImage, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const image = await chargeQrCode(deps, request.accountId, request.params.txid, request.query.format ?? 'png');
      return reply.type(image.contentType).send(image.body);
    },
  );
}
