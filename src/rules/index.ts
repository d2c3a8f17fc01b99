/** The rule registry and the engine that runs rules (registry.ts); one rule per file. This file only re-exports. */
export * from './registry';
