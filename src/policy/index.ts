/** The organisation's policy file (policy.ts) and version ranges (ranges.ts). This file only re-exports. */
export * from './policy';
export { admitsOutside, intersectConstraints } from './ranges';
