-- The sandbox's payload-signing PKI (docs/decisions/0032-payload-signing.md): one root CA, and
-- the certificates it issues to sign the JWS of payload locations, per host the service answers
-- at. Certificates are base64 DER (as in `x5c`); private keys are sealed under the
-- key-encryption key, as the token signing keys are.
CREATE TABLE payload_signing_authority (
  id                 smallint    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  certificate        text        NOT NULL CHECK (certificate ~ '^[A-Za-z0-9+/]+=*$'),
  private_key_sealed text        NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payload_signing_keys (
  kid                text        PRIMARY KEY,
  host               text        NOT NULL CHECK (length(host) BETWEEN 1 AND 253),
  algorithm          text        NOT NULL,
  certificate        text        NOT NULL CHECK (certificate ~ '^[A-Za-z0-9+/]+=*$'),
  private_key_sealed text        NOT NULL,
  not_after          timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payload_signing_keys_host_idx ON payload_signing_keys (host, not_after DESC);
