#!/usr/bin/env node
'use strict';
// Runs the compiled CLI (built by `npm run build`, which `npm ci` runs through the prepare script).
require('../dist/src/cli/entry.js');
