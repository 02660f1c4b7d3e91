-- The account holder's address: BCB's cobv answers and payloads carry it as the recebedor's
-- (DadosRecebedor: logradouro, cidade, uf, cep). NULL: none given. All four parts or none.
ALTER TABLE accounts ADD COLUMN address jsonb
  CHECK (address IS NULL OR (jsonb_typeof(address) = 'object' AND address ?& ARRAY['logradouro', 'cidade', 'uf', 'cep']));
