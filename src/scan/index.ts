/** The scan pipeline (pipeline.ts): archive → settings → modules → rules → report. This file only re-exports. */
export * from './pipeline';
export { policyInput, readPolicy } from './policy-file';
