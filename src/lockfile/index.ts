/**
 * Lock-file verification: parse `.terraform.lock.hcl`, hash provider packages the way
 * Terraform does, cross-check with the provider registry. The `lock-*` rules (src/rules/lock-*.ts,
 * `LOCK_RULES` in src/rules/registry.ts) judge the `LockAnalysis` that `analyzeLocks` returns.
 */
export { analyzeLocks, isPackageNotLoaded, packageNotLoaded } from './analyze';
export type { AnalyzeLocksInput } from './analyze';
export {
  EMPTY_H1,
  hashDirectory,
  hashEntries,
  hashPackage,
  hashZip,
  isWellFormedH1,
  isWellFormedZh,
  PackageHashError,
} from './hash';
export type { ZipEntryHash, ZipHashes, ZipHashOptions } from './hash';
export { findProviderPackages, isProviderPackageZip, packageServesRoot } from './packages';
export { parseLockFile } from './parse';
export { parseSums, platformsFromSums, RegistryClient } from './registry';
export type { RegistryClientOptions, ReleaseQuery } from './registry';
export { authenticateSums } from './signature';
export type { RegistrySigningKey, SignatureResult, TrustAnchors } from './signature';
export type * from './types';
export { compareProviderSources, formatLockFile, hclQuoted, lockFileHeader, normalizeHashes } from './write';
export type { LockEntryData } from './write';
export { currentPlatform, ReleaseHashResolver } from './release-hashes';
export type { ReleaseHashes, ReleaseHashesOptions, Resolved } from './release-hashes';
