-- Pix Automático's recurrences (BCB's `rec`), on the receiver's side: the account that charges
-- (account_id, a company), the payer it binds (devedor, and the payer's PSP once approved), the
-- calendar and amount rules its charges follow, and its life (status, with every change kept in
-- history as BCB's `atualizacao`: [{status, data}]). id_rec is BCB's idRec: R, R or N (retries
-- allowed or not), the receiver PSP's ISPB, the creation date and 11 random characters.
CREATE TABLE recurrences (
  id                     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id_rec                 text        NOT NULL UNIQUE CHECK (id_rec ~ '^R[RN][0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$'),
  account_id             bigint      NOT NULL REFERENCES accounts (id),
  loc_id                 bigint      UNIQUE REFERENCES rec_locations (id),
  status                 text        NOT NULL CHECK (status IN ('CRIADA', 'APROVADA', 'REJEITADA', 'EXPIRADA', 'CANCELADA')),
  contrato               text        NOT NULL CHECK (length(contrato) BETWEEN 1 AND 35),
  objeto                 text        CHECK (length(objeto) <= 35),
  devedor_document_type  text        NOT NULL CHECK (devedor_document_type IN ('CPF', 'CNPJ')),
  devedor_document       text        NOT NULL,
  devedor_nome           text        NOT NULL CHECK (length(devedor_nome) BETWEEN 1 AND 140),
  data_inicial           date        NOT NULL,
  data_final             date        CHECK (data_final >= data_inicial),
  periodicidade          text        NOT NULL CHECK (periodicidade IN ('SEMANAL', 'MENSAL', 'TRIMESTRAL', 'SEMESTRAL', 'ANUAL')),
  valor_rec_centavos     bigint      CHECK (valor_rec_centavos > 0),
  valor_minimo_centavos  bigint      CHECK (valor_minimo_centavos > 0),
  politica_retentativa   text        NOT NULL CHECK (politica_retentativa IN ('NAO_PERMITE', 'PERMITE_3R_7D')),
  convenio               text        CHECK (length(convenio) <= 60),
  jornada                text        NOT NULL CHECK (jornada IN ('AGUARDANDO_DEFINICAO', 'JORNADA_1', 'JORNADA_2', 'JORNADA_3', 'JORNADA_4')),
  jornada_txid           text        CHECK (jornada_txid ~ '^[a-zA-Z0-9]{26,35}$'),
  -- The payer's side, known once the payer approves: {ispbParticipante, cpf|cnpj, codMun?}.
  pagador                jsonb,
  -- Why it ended: {rejeicao: {codigo, descricao}} or {cancelamento: {solicitante, codigo, descricao}}.
  encerramento           jsonb,
  history                jsonb       NOT NULL,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  CHECK (valor_rec_centavos IS NULL OR valor_minimo_centavos IS NULL)
);
CREATE INDEX recurrences_account_created_idx ON recurrences (account_id, created_at DESC, id DESC);
