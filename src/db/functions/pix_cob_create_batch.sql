-- Several immediate charges (cob), each with a new payload location, in one statement: the
-- POST /cob, PUT /cob/{txid} and BCB's PUT /v2/cob/{txid} that arrive together share one round
-- trip and one commit (charges/batcher.ts, docs/decisions/0038-charge-batching.md). Each item
-- comes back with its charge's id, or with null when its txid is taken: the account already
-- holds a charge with it, or an earlier item of the batch takes it; such an item keeps no
-- location. Two batches taking one txid at once: the second fails on the unique index, and its
-- items are made again one at a time, so only that item is refused.
--
-- The txid check is a probe of the unique index per item (a handful of items; PostgreSQL
-- estimates any jsonb_to_recordset at 100 rows, which keeps it a nested loop over the index).
CREATE OR REPLACE FUNCTION pix_cob_create_batch(p_items jsonb, p_now timestamptz)
RETURNS TABLE (ord integer, charge_id bigint)
LANGUAGE sql AS $$
  WITH items AS (
    SELECT x.*
      FROM jsonb_to_recordset(p_items) AS x(
             ord integer, account_id bigint, txid text, token text, expiracao integer, amount bigint, modalidade integer,
             chave text, devedor jsonb, solicitacao text, info jsonb, br_code text, pix_copia_e_cola text, retirada jsonb)
  ), fresh AS (
    SELECT DISTINCT ON (i.account_id, i.txid) i.*
      FROM items i
     WHERE NOT EXISTS (SELECT 1 FROM charges c WHERE c.txid = i.txid AND c.account_id = i.account_id)
     ORDER BY i.account_id, i.txid, i.ord
  ), loc AS (
    INSERT INTO locations (account_id, tipo_cob, token, created_at)
    SELECT f.account_id, 'cob', f.token, p_now FROM fresh f ORDER BY f.ord
    RETURNING id, token
  ), ins AS (
    INSERT INTO charges (
      account_id, txid, status, expiracao_seconds, amount_centavos, modalidade_alteracao, chave, devedor,
      solicitacao_pagador, info_adicionais, br_code, loc_id, pix_copia_e_cola, retirada, created_at, updated_at
    )
    SELECT f.account_id, f.txid, 'ATIVA', f.expiracao, f.amount, f.modalidade, f.chave, f.devedor,
           f.solicitacao, f.info, f.br_code, l.id, f.pix_copia_e_cola, f.retirada, p_now, p_now
      FROM fresh f JOIN loc l ON l.token = f.token
     ORDER BY f.ord
    RETURNING id, loc_id
  )
  SELECT i.ord, ins.id
    FROM items i LEFT JOIN loc l ON l.token = i.token LEFT JOIN ins ON ins.loc_id = l.id
   ORDER BY i.ord;
$$;
