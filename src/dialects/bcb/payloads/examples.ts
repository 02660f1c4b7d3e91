import type { OperationExamples } from '../../../http/openapi-examples.ts';

const JWS =
  'eyJhbGciOiJQUzI1NiIsImtpZCI6InFfM0dnLWQ0WjJsQ3BfQm9rWXNKR0VMZ0lpZU9wTkpCVlRqTVhUZyIsImprdSI6Imh0dHBzOi8vcGl4LmV4YW1wbGUuY29tL3FyL2p3a3MifQ' +
  '.eyJ0eGlkIjoicGVkaWRvMjAyNjExMjQwMDAwMDAwMDAwMDEiLCJyZXZpc2FvIjowLCJzdGF0dXMiOiJBVElWQSJ9' +
  '.c2lnbmF0dXJl';

/** The examples of the public payload location of a cob and its JWK Set. */
export const PAYLOAD_EXAMPLES: Record<string, OperationExamples> = {
  bcbGetCobPayload: {
    params: { pixUrlAccessToken: '9d36b84fc70b478fb95c12729b90ca25' },
    responses: { 200: JWS },
    problems: { 404: 'CobPayloadNaoEncontrado' },
  },
  bcbGetPayloadJwks: {
    responses: {
      200: {
        keys: [
          {
            kty: 'RSA',
            n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
            e: 'AQAB',
            kid: 'q_3Gg-d4Z2lCp_BokYsJGELgIieOpNJBVTjMXTg',
            use: 'sig',
            alg: 'PS256',
            x5c: ['MIIBjTCCATOgAwIBAgIU...', 'MIIBkzCCATmgAwIBAgIU...'],
            x5t: 'dGhpcyBpcyBub3QgYSByZWFsIHg1dA',
            'x5t#S256': 'bm90IGEgcmVhbCBzaGEyNTYgdGh1bWJwcmludCBlaXRoZXI',
          },
        ],
      },
    },
  },
};
