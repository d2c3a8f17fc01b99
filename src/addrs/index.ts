/**
 * Addresses: provider source addresses and module source addresses (like Terraform's
 * internal/addrs). A leaf: it imports nothing but the shared model types.
 */
export {
  BUILTIN_TERRAFORM_PROVIDER,
  OPENTOFU_REGISTRY_HOST,
  TERRAFORM_REGISTRY_HOST,
  defaultRegistryHost,
  impliedProviderName,
  impliedProviderSource,
  isBuiltinProviderSource,
  isValidProviderName,
  parseProviderSource,
  shortSource,
} from './provider';
export type { ProviderSourceResult } from './provider';
export {
  classifyModuleSource,
  cleanRelativePath,
  isCleanRelativePath,
  isLocalModuleSource,
  isOutsideArchive,
  parseRemoteModuleSource,
  parseTerragruntRegistrySource,
  resolveLocalTarget,
  splitPackageSubdir,
} from './module-source';
export type { ModuleGetter, RemoteModuleSource } from './module-source';
export type * from './types';
