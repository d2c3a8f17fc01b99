#!/usr/bin/env node
'use strict';
// Runs the bundled CLI, dist-cli/tfguard.cjs: committed to the repository (`npm run build:cli` writes it
// from src/, and a test fails when it is stale), so installing from the repository builds nothing.
require('../dist-cli/tfguard.cjs');
