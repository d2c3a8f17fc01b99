#!/usr/bin/env node
'use strict';
// Runs the bundled CLI through its launcher, dist-cli/tfguard.cjs (src/cli/launch.ts: dist-cli/main.cjs
// with a V8 code cache): committed to the repository (`npm run build:cli` writes it from src/, and a
// test fails when it is stale), so installing from the repository builds nothing.
require('../dist-cli/tfguard.cjs');
