/**
 * How much V8 optimises hcl2json's WebAssembly: once a process may start hcl2json (the full parser,
 * pool.ts), its entry point calls `capWasmTierUp()` first.
 *
 * hcl2json is 6.5 MB of Go compiled to WebAssembly. V8 compiles a function with its baseline
 * compiler (Liftoff) on its first call, then recompiles it with TurboFan on background threads once
 * it has run "a budget" of code (`--wasm-tiering-budget`, a rough count of bytes executed per
 * function: 1,800,000 in Node 20's V8 11.3; later V8 raised the default to 13,000,000, see
 * `wasm_tiering_budget` in nodejs/node `deps/v8/src/flags/flag-definitions.h`). Go's start-up code
 * spends that budget at once, in functions of up to 16 KB of body, so a process's first hcl2json
 * parse made V8 compile 48 functions with TurboFan, up to 300 ms each and 1.9–2.3 s in all
 * (`--trace-wasm-compilation-times`), for code that runs once. On two cores that work took CPU from
 * the scan itself: a scan of a repository with one file only hcl2json can settle (a Jinja template
 * named `.tf`) took 1.24–1.34 s instead of 0.85–0.93 s (docs/performance.md, "hcl2json's
 * WebAssembly tier-up").
 *
 * With the budget at its maximum, one function still reaches it in a first parse; a function that
 * is really hot still does: four parses of an 833 KB file took 1.2, 0.86, 0.87 and 0.79 s, against
 * 2.2, 0.78, 0.82 and 0.78 s with V8's default. (`--liftoff-only`, which forbids TurboFan, was
 * faster still at start-up but 2.5 times slower on large files, and V8 aborts the process when
 * Liftoff cannot compile a function under it.)
 *
 * V8's flags are per process, and V8 rejects a code cache written under other flags: the CLI's
 * launcher calls this before it reads its code cache (src/cli/launch.ts), never in the middle of a
 * run, so every run of the CLI writes and reads its cache under the same flags. The Lambda
 * handlers call it when a container builds its runtime (handlers/runtime.ts). Only entry points call it: the
 * core never changes the flags of a process it is loaded into.
 */
import * as v8 from 'node:v8';

/** The largest value of V8's integer flags (the budget is an `int`). */
export const WASM_TIERING_BUDGET = 2_147_483_647;

/**
 * Whether the V8 of this version has `--wasm-tiering-budget` as measured here: Node 20's V8 11.3
 * through the V8 of the Node releases after it (Lambda runs Node 22, V8 12.4). V8 prints
 * "unrecognized flag" to stderr for a flag it lacks, so another major is left with its defaults.
 */
export function tiersByBudget(v8Version: string): boolean {
  const major = Number(/^(\d+)\./.exec(v8Version)?.[1]);
  return major >= 11 && major <= 14;
}

let capped: boolean | undefined;

/** Raises V8's WebAssembly tiering budget to its maximum, once per process; true when it did (or
 * had), false on a V8 it is not for. */
export function capWasmTierUp(): boolean {
  if (capped === undefined) {
    capped = tiersByBudget(process.versions.v8);
    if (capped) v8.setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
  }
  return capped;
}
