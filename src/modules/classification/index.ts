/** What every directory is (classify.ts: the list of signals, strongest first). This file only re-exports. */
export * from './classify';
// Named as well: rules ask it for every finding (see src/archive/index.ts).
export { kindLabel } from './classify';
