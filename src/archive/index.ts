/** The safe in-memory reader of directories and archives (read.ts). This file only re-exports. */
export * from './read';
// Named here as well: the path helpers run for every entry, and under a CommonJS loader (tsx, which
// runs the tests and the bench) a name that only `export *` passes on costs two more getter hops
// per call (a generic one, then read.ts's), which profiles of warm scans showed.
export { basename, compareUtf8, dirname } from './paths';
