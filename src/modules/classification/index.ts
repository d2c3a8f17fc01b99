/** What every directory is (classify.ts: the list of signals, strongest first). This file only re-exports. */
export * from './classify';
