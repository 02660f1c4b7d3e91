-- The OAuth scopes an operator allows a client to hold; NULL: every scope the service knows.
ALTER TABLE accounts ADD COLUMN scopes text[] CHECK (scopes IS NULL OR array_position(scopes, NULL) IS NULL);
