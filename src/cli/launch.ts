/**
 * The CLI's process entry in the bundle (dist-cli/tfguard.cjs, scripts/build-cli.ts): runs the
 * bundled CLI, dist-cli/main.cjs, with a V8 code cache (src/cli/code-cache.ts) in
 * `<cache directory>/v8`, the cache directory being the CLI's (`TFGUARD_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/tfguard`, else `~/.cache/tfguard`). `TFGUARD_CODE_CACHE=off` runs it without.
 *
 * It reads those variables itself, the one place besides src/config.ts that reads `process.env`:
 * it runs before the CLI is loaded, and src/config.ts imports most of the scanner (about 1 MB of
 * bundle) that this file is here to load from the cache. config.ts declares the variables (the
 * README's operator table and `--help`) and rejects an unusable `TFGUARD_CODE_CACHE` in the CLI.
 */
import * as path from 'node:path';
import { cacheDirectoryFrom } from '../util/cache-dir';
import { tuneV8 } from '../util/v8-flags';
import { runWithCodeCache } from './code-cache';

/** The commands that scan: a cache written by one of them holds the scanner's functions. */
const SCANNING_COMMANDS = new Set(['scan', 'fix', 'audit']);

// Before the code cache is read: V8 rejects a cache written under other flags, so they are set at
// the same point of every run (src/util/v8-flags.ts).
tuneV8();

const env = process.env;
const off = env.TFGUARD_CODE_CACHE?.trim().toLowerCase() === 'off';
const dir = off ? undefined : cacheDirectoryFrom(env.TFGUARD_CACHE_DIR, env.XDG_CACHE_HOME, env.HOME);
const run = runWithCodeCache(path.join(__dirname, 'main.cjs'), {
  dir: dir === undefined ? undefined : path.join(dir, 'v8'),
  scans: SCANNING_COMMANDS.has(process.argv[2] ?? ''),
});
// At the end of the run: the cache then holds the functions the run compiled.
if (run.save !== undefined) process.once('exit', run.save);
