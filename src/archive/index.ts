/** The safe in-memory reader of directories and archives (read.ts). This file only re-exports. */
export * from './read';
