#!/usr/bin/env node
// The relay's command line (`engram-relay --help`). `#main` is the compiled
// dist/main.js; under `node --conditions=source --import tsx` (the monorepo's
// `npm run relay`) it is src/main.ts instead.
import '#main'
