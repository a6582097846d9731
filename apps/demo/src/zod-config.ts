import { z } from 'zod'

// Zod probes `new Function('')` once, as its first object schema is made, to decide whether to compile
// its parsers. The demo's Content-Security-Policy forbids eval, and Chromium reports the refused probe as
// a console error even though zod catches it. `jitless` skips the probe. This module is the page's first
// import, so it runs before `ai` and `@engram/ai-sdk` make their schemas.
z.config({ jitless: true })
