/**
 * Remote module resolution: registry modules through their provider metadata or their
 * packages, git and HTTP packages on allowed hosts, and installed copies in the archive
 * (`.terraform/modules`). See resolve.ts for the order, network.ts for what is asked of whom and
 * cached, and docs/remote-modules.md.
 */
export { isModulesManifest, readModulesManifest, MODULES_MANIFEST } from './manifest';
export type { ManifestEntry } from './manifest';
export { RemoteNetwork, parseModuleVersions } from './network';
export type { RegistryModuleVersion, RegistrySubmodule, RemoteNetworkOptions } from './network';
export {
  localCall,
  MAX_REMOTE_DEPTH,
  MAX_REMOTE_MODULES,
  metadataSummary,
  offlineReason,
  RemoteResolver,
  selectModuleVersion,
  stripTopDirectory,
} from './resolve';
export type { PackageLoader, PackageModule, PackageSummary, ResolveRemoteInput } from './resolve';
export { packageAndDir, parseRegistrySource, parseRemotePackage, registryAddress } from './source';
export type { ArchivePackage, RegistryModuleAddress, RemotePackage } from './source';
