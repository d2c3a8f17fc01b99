/** Deployment declarations (read.ts reads them all; one reader per tool). This file only re-exports. */
export * from './read';
