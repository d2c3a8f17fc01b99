/**
 * Module loading, as Terraform / OpenTofu do it (src/modules/load/: named phases), and the remote
 * pass after it (resolve-remote.ts). This file only re-exports.
 */
export { matchGlob } from './glob';
export { CONSTANT_PROJECTION, LOADER_PROJECTION } from './projection';
export { configExtension, isIgnoredName, selectConfigFiles } from './files';
export type { FileSelection } from './files';
export {
  BUILTIN_TERRAFORM_PROVIDER,
  classifyModuleSource,
  defaultRegistryHost,
  impliedProviderSource,
  parseProviderSource,
  resolveLocalTarget,
} from '../addrs';
export type { ProviderSourceResult } from '../addrs';
export { combineConstraints, moduleRequirements } from './tree';
export { classifyModules, kindLabel, SIGNALS, buildContext, subjectOf } from './classification';
export type { KindDecision, Signal, Subject, ClassificationContext, ClassifyInput } from './classification';
export { readRepositorySignals } from './repository';
export type { RepositorySignals, TerragruntUnit, TestRun } from './repository';
export type { ModuleConstraint } from './tree';
export { remoteLabel, withRemoteModules } from './tree';
export {
  isModulesManifest,
  MAX_REMOTE_DEPTH,
  offlineReason,
  parseModuleVersions,
  parseRegistrySource,
  parseRemotePackage,
  RemoteNetwork,
  selectModuleVersion,
} from './remote';
export type { RemoteNetworkOptions, PackageSummary } from './remote';

export { loadModules, selectFiles } from './load/load-modules';
export { LoadMemo } from './load/memo';
export type { LoadedModules, LoadModulesInput } from './load/load-modules';
export type { ConfigFileReader } from './load/read';
export { detectEngine, LOCK_FILE_NAME } from './load/engine';
export { installedCopyReason } from './load/installed';
export { resolveRemoteModules, summarizePackage } from './resolve-remote';
export type { ResolveRemoteModulesInput } from './resolve-remote';
export type * from './types';
export { MODULE_KINDS, REMOTE_ORIGINS } from './types';
