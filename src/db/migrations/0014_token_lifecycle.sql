-- Token lifecycle (docs/decisions/0003-token-lifecycle.md).
--
-- Private signing keys are kept sealed (AES-256-GCM under KEY_ENCRYPTION_KEY, the kid as
-- additional data), so that reading the database is not enough to mint tokens. private_jwk stays
-- only for rows written before: the service seals them on its first start and clears the plain
-- copy. A retired key keeps neither: it never signs again. Every process now signs with the
-- newest active key (not the oldest, as 0001 says), so that a rotation takes effect.
ALTER TABLE signing_keys ADD COLUMN private_key_sealed text;
ALTER TABLE signing_keys ALTER COLUMN private_jwk DROP NOT NULL;
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_private_once
  CHECK (private_jwk IS NULL OR private_key_sealed IS NULL);
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_active_has_private
  CHECK (retired_at IS NOT NULL OR private_jwk IS NOT NULL OR private_key_sealed IS NOT NULL);

-- Every rotation of a client secret raises the version; a token carries the version it was
-- issued under, and one below the account's current version is revoked.
ALTER TABLE accounts ADD COLUMN client_secret_version integer NOT NULL DEFAULT 1;
