#!/usr/bin/env node
// Runs the compiled relay (`npm run build` first). Same flags as `npm run relay`.
import '../dist/main.js'
