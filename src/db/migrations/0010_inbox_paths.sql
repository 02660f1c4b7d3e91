-- An inbox takes sub-paths (`/sandbox/inbox/{name}/pix`): BCB's callbacks go to a webhook's URL
-- plus `/pix` (and `/rec`, `/cobr`). Each arrival keeps the sub-path it came to; '' for none.
ALTER TABLE sandbox_inbox ADD COLUMN path text NOT NULL DEFAULT '' CHECK (path ~ '^(/[A-Za-z0-9_-]{1,64})?$');
