/**
 * The fixture of BCB's schemas (test/fixtures/bcb-api-pix.json) is as strict as BCB's file read
 * with its errata: a test that validates `/v2` answers against it catches what BCB refuses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertBcbAnswer, assertBcbDefinition } from './support/bcb-schemas.ts';

const TXID = '7mvAK49xGAi5X7NucC5O8kY9EuTdI7fK';
const E2EID = 'E12345678202009091221abcdef12345';

/** A charge as PUT /cob/{txid} answers it, with a devedor. */
function cobGerada(): Record<string, unknown> {
  const location = 'pix.example.com/qr/v2/212fe7fdb7b8dcb7d067c6803e76b0de';
  return {
    calendario: { criacao: '2026-11-27T18:07:41.894Z', expiracao: 3600 },
    txid: TXID,
    revisao: 0,
    status: 'ATIVA',
    devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
    valor: { original: '10.00', modalidadeAlteracao: 0 },
    chave: '7d14b89d-6108-4707-bf36-32c7bc6d760f',
    loc: { id: 3, location, tipoCob: 'cob', criacao: '2026-11-27T18:07:41.894Z', txid: TXID },
    location,
    pixCopiaECola: '00020101021226750014br.gov.bcb.pix2553pix.example.com/qr/v2/212fe7fdb7b8dcb7d067c6803e76b0de5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304ABCD',
  };
}

const pix = (txid?: string) => ({ endToEndId: E2EID, ...(txid === undefined ? {} : { txid }), valor: '10.00', horario: '2026-11-27T18:07:41.894Z' });

describe("the fixture of BCB's schemas", () => {
  it('accepts a charge as BCB writes it', () => {
    assertBcbDefinition('CobGerada', cobGerada());
    assertBcbAnswer('PUT /cob/{txid}', { statusCode: 201, headers: { 'content-type': 'application/json' }, body: JSON.stringify(cobGerada()) });
  });

  it('refuses a txid longer than 35 characters, or with other characters around 26 good ones (patterns are the whole value)', () => {
    assert.throws(() => assertBcbDefinition('CobGerada', { ...cobGerada(), txid: `${TXID}123456789` }), /txid/);
    assert.throws(() => assertBcbDefinition('CobGerada', { ...cobGerada(), txid: `-${TXID}-` }), /txid/);
    assert.throws(() => assertBcbDefinition('Pix', pix('a'.repeat(36))), /txid/);
  });

  it('refuses an amount that is not 1 to 10 digits, a point and 2 decimals', () => {
    for (const original of ['10.5', '-10.00', '10.000', '1,000.00', '12345678901.00']) {
      assert.throws(() => assertBcbDefinition('CobGerada', { ...cobGerada(), valor: { original } }), /original/, original);
    }
  });

  it('refuses a devedor with both cpf and cnpj (oneOf stands)', () => {
    const devedor = { cpf: '12345678909', cnpj: '12345678000195', nome: 'Empresa de Serviços SA' };
    assert.throws(() => assertBcbDefinition('CobGerada', { ...cobGerada(), devedor }), /devedor/);
    assertBcbDefinition('CobGerada', { ...cobGerada(), devedor: { cnpj: '12345678000195', nome: 'Empresa de Serviços SA' } });
  });

  it("accepts a received Pix with a txid of 1 to 35 (a static code's), or none", () => {
    assertBcbDefinition('Pix', pix('pedido123'));
    assertBcbDefinition('Pix', pix('1'));
    assertBcbDefinition('Pix', pix());
  });

  it('refuses an endToEndId that is not 32 letters and digits', () => {
    assert.throws(() => assertBcbDefinition('Pix', { ...pix(), endToEndId: `${E2EID.slice(0, 31)}-` }), /endToEndId/);
  });
});
