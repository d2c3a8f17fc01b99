/**
 * The V8 flags of a process that scans. The entry points call `tuneV8()` before any scan code runs:
 * the CLI's launcher (src/cli/launch.ts) and the Lambda runtime when a container builds it
 * (handlers/runtime.ts). The core never changes the flags of a process it is loaded into.
 *
 * **`--wasm-tiering-budget` at its maximum.** hcl2json (src/hcl/full/pool.ts) is 6.5 MB of Go
 * compiled to WebAssembly. V8 compiles a function with its baseline compiler (Liftoff) on its first
 * call and again with TurboFan, on background threads, once it has run its budget (a rough count of
 * bytes executed: 1,800,000 in Node 20's V8 11.3; later V8 raised the default to 13,000,000, see
 * `wasm_tiering_budget` in nodejs/node `deps/v8/src/flags/flag-definitions.h`). Go's start-up code
 * spends that at once in functions of up to 16 KB of body, so a process's first hcl2json parse had
 * 48 functions compiled by TurboFan, up to 300 ms each and 1.9–2.3 s in all
 * (`--trace-wasm-compilation-times`), for code that runs once; on two cores that CPU came out of the
 * scan. uktrade/platform-tools (one Jinja template named `.tf`, which only hcl2json settles):
 * 1.24–1.34 → 0.78–0.96 s (docs/performance.md, "hcl2json's WebAssembly tier-up"). A really hot
 * function still tiers up: four parses of an 833 KB file took 1.21, 0.86, 0.87 and 0.79 s, against
 * 2.16, 0.78, 0.78 and 0.78 s at the default. (`--liftoff-only`, which forbids TurboFan, starts
 * faster still but is 2.5 times slower on large files, and aborts the process if Liftoff cannot
 * compile a function.)
 *
 * Not set: a later TurboFan for JavaScript (`--interrupt-budget`, 2 to 16 times V8's 67,584) took a
 * quarter off a large cold scan's CPU but made a small one about 10% slower on two cores; less
 * inlining (`--max-inlined-bytecode-size-cumulative=120`, or `--no-turbo-inlining`) took 5-11% off
 * a large cold scan and made a small one about 10% slower too (docs/performance.md, "Where the 3×
 * target stands").
 *
 * V8 rejects a code cache written under other flags (it keeps a hash of them): the launcher sets
 * these before it reads its cache, at the same point of every run, never in the middle of one.
 */
import * as v8 from 'node:v8';

/** V8's largest integer flag value. */
const WASM_TIERING_BUDGET = `--wasm-tiering-budget=${2 ** 31 - 1}`;

/**
 * The flags `tuneV8` sets on a V8 of this version: V8 11 (Node 20, measured here) to 14 have the
 * flag with the same meaning (Lambda runs Node 22, V8 12.4). V8 prints "unrecognized flag" to stderr
 * for a flag it lacks, so another major keeps V8's defaults.
 */
export function scanV8Flags(v8Version: string): string[] {
  const major = Number(/^(\d+)\./.exec(v8Version)?.[1]);
  return major >= 11 && major <= 14 ? [WASM_TIERING_BUDGET] : [];
}

let tuned: string[] | undefined;

/** Sets `scanV8Flags` for this process's V8, once per process; returns the flags set. */
export function tuneV8(): readonly string[] {
  if (tuned === undefined) {
    tuned = scanV8Flags(process.versions.v8);
    if (tuned.length > 0) v8.setFlagsFromString(tuned.join(' '));
  }
  return tuned;
}
