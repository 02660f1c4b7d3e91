/**
 * The codes of Pix Automático that BCB's API Pix 2.9 lists, with the descriptions of the SPI's
 * message catalog (Catálogo de Mensagens e de Serviços do SPI) as PSPs publish them; which
 * refusals end a whole recurring charge and which end one attempt. Sources and what is not
 * confirmed: docs/decisions/0048-pix-automatico-cycle.md.
 */

/** Why a payer's PSP refuses a recurring charge or one of its attempts (CobRTentativas.rejeicao.codigo). */
export const CHARGE_REJECTIONS = {
  AB10: 'Transação interrompida devido a erro no participante do usuário pagador',
  AC05: 'Conta transacional do usuário pagador encerrada',
  AC06: 'Conta transacional do usuário pagador encontra-se bloqueada',
  AM02: 'Valor da cobrança ultrapassa o valor máximo estabelecido pelo usuário pagador',
  AM09: 'Valor da cobrança não corresponde ao valor estabelecido na recorrência',
  DENC: 'CPF/CNPJ do usuário pagador não corresponde ao dado contido na recorrência/autorização',
  DS27: 'Participante não se encontra cadastrado ou ainda não iniciou a operação no SPI',
  DTED: 'Divergência entre a data de vencimento informada e a periodicidade da recorrência e/ou as regras do produto',
  DTNT: 'Novas tentativas de agendamento pós vencimento em desacordo com o limite de dias definido na regra de negócio',
  FBRD: 'Instrução de pagamento recebida fora do prazo para cumprimento das regras do negócio',
  IRNT: 'Cobrança recorrente não permite novas tentativas de agendamento pós vencimento',
  MIDI: 'idRecorrencia inexistente ou incorreto',
  MSUC: 'Recorrência não confirmada pelo usuário pagador',
  NIEC: 'Nova instrução de pagamento inválida: a cobrança já tem ordem de pagamento agendada pendente de envio ao SPI',
  NIPA: 'Nova instrução de pagamento inválida: o pagamento já foi efetivado',
  NITX: 'Nova instrução de pagamento não corresponde a uma cobrança recorrente gerada anteriormente',
  QUNT: 'Quantidade de novas tentativas de agendamento pós vencimento excede o limite da regra de negócio',
  RC09: 'ISPB do participante do usuário pagador inválido ou inexistente',
  UDEI: 'CPF/CNPJ do devedor incorreto',
} as const;
export type ChargeRejection = keyof typeof CHARGE_REJECTIONS;

/** The refusals that end the whole recurring charge (BCB: "causam a rejeição da cobrança recorrente correspondente"); the others end one attempt. */
export const WHOLE_CHARGE_REJECTIONS: ReadonlySet<ChargeRejection> = new Set(['AC05', 'AM09', 'DENC', 'DS27', 'DTED', 'MIDI', 'MSUC', 'NITX', 'RC09']);

/**
 * A settlement that found no funds: the SPI's reason for it (AM04, saldo insuficiente). It is no
 * rejection of the catalog's list: the attempt expires (EXPIRADA) after the evening's retry, as
 * BCB's example cobRResponse3 shows, with no `rejeicao`.
 */
export const INSUFFICIENT_FUNDS = 'AM04';
export const INSUFFICIENT_FUNDS_DESCRIPTION = 'Saldo insuficiente na conta transacional do usuário pagador';

/** Why a recurring charge was cancelled (CobRAtualizacao.encerramento.cancelamento.codigo). */
export const CHARGE_CANCELLATIONS = {
  ACCT: 'Cancelamento do agendamento decorrente de encerramento da conta transacional do usuário pagador ou do usuário recebedor',
  BLCK: 'Cancelamento do agendamento decorrente de bloqueio da conta transacional do usuário pagador ou do usuário recebedor',
  CCLD: 'Cancelamento do agendamento decorrente do cancelamento da autorização para pagamentos periódicos',
  FAIL: 'Cancelamento do agendamento por falha ou erro no fluxo de liquidação',
  OTHR: 'Cancelamento de agendamento solicitado pelo participante do usuário pagador ou do usuário recebedor, decorrente de outros motivos',
  SLBD: 'Cancelamento de agendamento solicitado pelo usuário pagador',
  SLCR: 'Cancelamento de agendamento solicitado pelo usuário recebedor',
} as const;
export type ChargeCancellation = keyof typeof CHARGE_CANCELLATIONS;

/** Why a payer refused a recurrence (RecEncerramento.rejeicao.codigo). */
export const REC_REJECTIONS = {
  AP13: 'O usuário pagador não reconheceu a solicitação de confirmação da recorrência',
  AP14: 'O usuário pagador rejeitou a solicitação de confirmação da recorrência',
} as const;
export type RecRejection = keyof typeof REC_REJECTIONS;

/** Why a recurrence was cancelled (RecEncerramento.cancelamento.codigo). */
export const REC_CANCELLATIONS = {
  ACCL: 'Cancelamento motivado por encerramento da conta do usuário pagador ou do usuário recebedor',
  CPCL: 'Cancelamento motivado por encerramento das atividades do usuário recebedor',
  DCSD: 'Cancelamento motivado por falecimento do usuário pagador',
  ERSL: 'Cancelamento por erro na solicitação de confirmação da recorrência',
  FRUD: 'Cancelamento motivado por suspeita de fraude',
  PCFD: 'Cancelamento porque a recorrência já foi confirmada por outra jornada',
  SLCR: 'Cancelamento solicitado pelo usuário recebedor',
  SLDB: 'Cancelamento solicitado pelo usuário pagador',
} as const;
export type RecCancellation = keyof typeof REC_CANCELLATIONS;

export type Solicitante = 'PSP_PAGADOR' | 'USUARIO_PAGADOR' | 'PSP_RECEBEDOR' | 'USUARIO_RECEBEDOR';

/** Every code a Pix Automático fault of the sandbox may name: a charge's refusals, the lack of funds, a recurrence's refusals. */
export const FAULT_REASONS: ReadonlySet<string> = new Set([...Object.keys(CHARGE_REJECTIONS), INSUFFICIENT_FUNDS, ...Object.keys(REC_REJECTIONS)]);

export const isChargeRejection = (code: string): code is ChargeRejection => Object.hasOwn(CHARGE_REJECTIONS, code);
export const isRecRejection = (code: string): code is RecRejection => Object.hasOwn(REC_REJECTIONS, code);
