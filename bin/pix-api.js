#!/usr/bin/env node
// The CLI entry for `npx pix-api ...`; npm puts node_modules/.bin first on PATH, so this runs on
// the Node 24 that the project depends on.
import '../src/main.ts';
