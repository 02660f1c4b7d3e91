-- Who this database is. Files the service writes outside the database (the sandbox's demo
-- credentials under DATA_DIR) name it, so that a start on another database can tell they are not
-- its own. Written once, here, and never changed: a copy of the database (a dump restored) is
-- the same database, with the same accounts, and keeps the identity.
CREATE TABLE database_identity (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- One row at most: a second one would break this column's unique constraint.
  one_row boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row)
);
INSERT INTO database_identity DEFAULT VALUES;

-- The sandbox's demo account of this database: provisioned once per database, whatever files a
-- DATA_DIR holds (deciding by the files gave a second demo account when they were another
-- database's).
CREATE TABLE demo_account (
  account_id bigint PRIMARY KEY REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  one_row boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row)
);
