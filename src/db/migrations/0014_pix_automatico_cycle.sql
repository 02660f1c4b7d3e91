-- Pix Automático's cycle (docs/decisions/0048-pix-automatico-cycle.md): the solicitations that
-- ask a payer to approve a recurrence (BCB's `solicrec`), the recurring charges (`cobr`) and
-- their attempts (`tentativas`), the receivers' webhooks of recurrences and recurring charges
-- (`webhookrec`, `webhookcobr`), and the Pix Automático faults of the sandbox.
--
-- Every row that the network moves on its own (a solicitation sent, a charge scheduled, an
-- attempt settled, a charge expired) says when it moves next (`next_step_at`): the rules
-- runner (modules/recurrences/network.ts) takes what is due, oldest first, and the test clock's
-- next event is the smallest of them.

-- The payer's side of a recurrence, once one approves it: the maximum a charge may ask (the
-- payer's, where the recurrence has no fixed amount), and the payer's account when the payer is
-- an account of this service.
ALTER TABLE recurrences
  ADD COLUMN valor_maximo_pagador_centavos bigint CHECK (valor_maximo_pagador_centavos > 0),
  ADD COLUMN payer_account_id bigint REFERENCES accounts (id);
CREATE INDEX recurrences_payer_idx ON recurrences (payer_account_id) WHERE payer_account_id IS NOT NULL;

-- A solicitation of the payer's approval (journey 1): sent to the payer's PSP (destinatario),
-- answered there, or expired at expires_at (calendario.dataExpiracaoSolicitacao).
CREATE TABLE rec_solicitations (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id_solic_rec    text        NOT NULL UNIQUE CHECK (id_solic_rec ~ '^SC[0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$'),
  account_id      bigint      NOT NULL REFERENCES accounts (id),
  recurrence_id   bigint      NOT NULL REFERENCES recurrences (id),
  status          text        NOT NULL CHECK (status IN ('CRIADA', 'ENVIADA', 'RECEBIDA', 'REJEITADA', 'ACEITA', 'EXPIRADA', 'CANCELADA')),
  expires_at      timestamptz NOT NULL,
  -- The payer it goes to: {agencia?, conta, ispbParticipante, cpf|cnpj}.
  destinatario    jsonb       NOT NULL,
  history         jsonb       NOT NULL,
  -- When the network moves it next (sent, received, answered, expired); NULL once it ended.
  next_step_at    timestamptz,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL
);
-- One solicitation under way per recurrence (BCB: "Existe uma solicitação ativa referente ao mesmo idRec").
CREATE UNIQUE INDEX rec_solicitations_open_idx ON rec_solicitations (recurrence_id) WHERE status IN ('CRIADA', 'ENVIADA', 'RECEBIDA');
CREATE INDEX rec_solicitations_due_idx ON rec_solicitations (next_step_at) WHERE next_step_at IS NOT NULL;
CREATE INDEX rec_solicitations_account_idx ON rec_solicitations (account_id, created_at DESC, id DESC);

-- A recurring charge (BCB's cobr): one per cycle of its recurrence that is neither REJEITADA nor
-- CANCELADA, settled on settlement_date (its dataDeVencimento, moved to the next business day
-- when ajuste_dia_util says so) by its attempts.
CREATE TABLE recurring_charges (
  id                   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id           bigint      NOT NULL REFERENCES accounts (id),
  recurrence_id        bigint      NOT NULL REFERENCES recurrences (id),
  txid                 text        NOT NULL CHECK (txid ~ '^[a-zA-Z0-9]{26,35}$'),
  status               text        NOT NULL CHECK (status IN ('CRIADA', 'ATIVA', 'CONCLUIDA', 'EXPIRADA', 'REJEITADA', 'CANCELADA')),
  due_date             date        NOT NULL,
  settlement_date      date        NOT NULL CHECK (settlement_date >= due_date),
  -- The recurrence's period it charges, counted from calendario.dataInicial (0: the first).
  cycle                integer     NOT NULL CHECK (cycle >= 0),
  ajuste_dia_util      boolean     NOT NULL,
  amount_centavos      bigint      NOT NULL CHECK (amount_centavos > 0),
  info_adicional       text        CHECK (length(info_adicional) <= 140),
  -- {agencia?, conta, tipoConta}: the receiver's account, as BCB's DadosBancariosRecebedor.
  recebedor            jsonb       NOT NULL,
  -- {email?, logradouro?, cidade?, uf?, cep?}: the devedor's contact, as given.
  devedor              jsonb,
  encerramento         jsonb,
  history              jsonb       NOT NULL,
  -- The received Pix that paid it.
  paid_transaction_id  bigint,
  -- While nothing else is pending: when it expires, no attempt having paid it.
  next_step_at         timestamptz,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  UNIQUE (account_id, txid)
);
CREATE UNIQUE INDEX recurring_charges_cycle_idx ON recurring_charges (recurrence_id, cycle) WHERE status NOT IN ('REJEITADA', 'CANCELADA');
CREATE INDEX recurring_charges_account_idx ON recurring_charges (account_id, created_at DESC, id DESC);
CREATE INDEX recurring_charges_due_idx ON recurring_charges (next_step_at) WHERE next_step_at IS NOT NULL;

-- An attempt to settle a recurring charge (BCB's tentativas): the first (AGND), one the
-- receiver's PSP sends again when the payer's PSP did not answer (NTAG), or a retry the receiver
-- asks for after the due date (RIFL). `step` is what the network does next, at `next_step_at`:
-- the payer's PSP answers (schedules or refuses), or its answer is overdue, or the morning's
-- settlement, or the evening's retry of one that lacked funds.
CREATE TABLE recurring_charge_attempts (
  id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  charge_id        bigint      NOT NULL REFERENCES recurring_charges (id),
  position         smallint    NOT NULL CHECK (position >= 1),
  tipo             text        NOT NULL CHECK (tipo IN ('AGND', 'NTAG', 'RIFL')),
  data_liquidacao  date        NOT NULL,
  status           text        NOT NULL CHECK (status IN ('SOLICITADA', 'AGENDADA', 'PAGA', 'CANCELADA', 'REJEITADA', 'EXPIRADA')),
  end_to_end_id    text        NOT NULL UNIQUE CHECK (end_to_end_id ~ '^E[0-9A-Z]{8}[0-9]{12}[a-zA-Z0-9]{11}$'),
  rejeicao         jsonb,
  history          jsonb       NOT NULL,
  step             text        CHECK (step IN ('answer', 'answer_overdue', 'settle', 'retry')),
  next_step_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  UNIQUE (charge_id, position),
  CHECK ((step IS NULL) = (next_step_at IS NULL))
);
-- One attempt under way per charge.
CREATE UNIQUE INDEX recurring_charge_attempts_open_idx ON recurring_charge_attempts (charge_id) WHERE status IN ('SOLICITADA', 'AGENDADA');
CREATE INDEX recurring_charge_attempts_due_idx ON recurring_charge_attempts (next_step_at) WHERE next_step_at IS NOT NULL;

-- The receivers' webhooks of Pix Automático (PUT /v2/webhookrec, /v2/webhookcobr): one URL per
-- account and kind, whose callbacks go to `{webhook_url}/rec` and `{webhook_url}/cobr`.
CREATE TABLE automatico_webhooks (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL REFERENCES accounts (id),
  kind            text        NOT NULL CHECK (kind IN ('rec', 'cobr')),
  webhook_url     text        NOT NULL CHECK (length(webhook_url) <= 2048),
  destination_id  bigint      NOT NULL,
  created_at      timestamptz NOT NULL,
  UNIQUE (account_id, kind)
);

-- A notification says what it is about when no transaction says it: a recurrence (its idRec) or
-- a recurring charge (its txid), so that its latest callback can be found and resent.
ALTER TABLE outbox ADD COLUMN subject text;
CREATE INDEX outbox_subject_idx ON outbox (account_id, subject) WHERE subject IS NOT NULL;

-- The sandbox's payer PSP refusing (or not answering) Pix Automático's solicitations,
-- schedulings and settlement attempts: kind 'automatico', a stage, and a catalog code
-- (four letters and digits: AM02, DENC, ...).
ALTER TABLE sandbox_faults ADD COLUMN stage text CHECK (stage IN ('solicitation', 'scheduling', 'attempt'));
ALTER TABLE sandbox_faults DROP CONSTRAINT sandbox_faults_kind_check;
ALTER TABLE sandbox_faults ADD CONSTRAINT sandbox_faults_kind_check CHECK (kind IN ('webhook', 'settlement', 'directory', 'automatico'));
ALTER TABLE sandbox_faults DROP CONSTRAINT sandbox_faults_effect_check;
ALTER TABLE sandbox_faults ADD CONSTRAINT sandbox_faults_effect_check CHECK (effect IN ('status', 'timeout', 'delay', 'reject', 'unavailable', 'late'));
ALTER TABLE sandbox_faults DROP CONSTRAINT sandbox_faults_reason_check;
ALTER TABLE sandbox_faults ADD CONSTRAINT sandbox_faults_reason_check CHECK (reason ~ '^[A-Z0-9]{4}$');
ALTER TABLE sandbox_faults DROP CONSTRAINT sandbox_faults_check;
ALTER TABLE sandbox_faults ADD CONSTRAINT sandbox_faults_check CHECK (
  (kind = 'webhook' AND url_prefix IS NOT NULL AND pix_key IS NULL AND reason IS NULL AND stage IS NULL
    AND effect IN ('status', 'timeout', 'delay')
    AND (effect <> 'status' OR status IS NOT NULL) AND (effect <> 'delay' OR delay_ms IS NOT NULL))
  OR (kind = 'settlement' AND pix_key IS NOT NULL AND url_prefix IS NULL AND status IS NULL AND remaining IS NULL AND stage IS NULL
    AND ((effect = 'reject' AND reason IS NOT NULL) OR (effect = 'delay' AND delay_ms IS NOT NULL)))
  OR (kind = 'directory' AND effect = 'unavailable' AND url_prefix IS NULL AND pix_key IS NULL AND remaining IS NULL AND stage IS NULL)
  OR (kind = 'automatico' AND stage IS NOT NULL AND url_prefix IS NULL AND pix_key IS NULL AND status IS NULL AND delay_ms IS NULL
    AND ((effect = 'reject' AND reason IS NOT NULL) OR (effect = 'late' AND stage = 'scheduling' AND reason IS NULL)))
);
