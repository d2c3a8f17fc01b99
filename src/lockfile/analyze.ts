/**
 * The I/O half of lock-file verification: parse every root's lock file with the shared HCL parser,
 * hash the provider packages kept in the archive, and (when `registry` is on) ask the registry for
 * the authenticated checksums of every locked provider version. The `lock-*` rules then judge the
 * result synchronously.
 */
import type { HclParser } from '../hcl';
import type { Engine, InputKind, ScanConfig } from '../model';
import { inputKind, type LoadedArchive } from '../archive';
import type { ModuleInfo, RootTree } from '../modules';
import type { ParseResult } from '../hcl';
import { hashEntries, hashZip } from './hash';
import { findProviderPackages, packageServesRoot } from './packages';
import { parseLockFile } from './parse';
import { RegistryClient } from './registry';
import type {
  HashedPackage,
  LockAnalysis,
  LockFile,
  ProviderPackage,
  RegistryCheck,
  RootLockAnalysis,
} from './types';
import { mapLimit } from '../util/map-limit';

export interface AnalyzeLocksInput {
  archive: LoadedArchive;
  modules: readonly ModuleInfo[];
  roots: readonly RootTree[];
  config: ScanConfig;
  parser: Pick<HclParser, 'parse'>;
  /** The engine the scan settled on (default `config.engine`). */
  engine?: Engine;
  /** Registry client for the cross-check (when `config.registry`); default: one built from
   * `config.registryHosts` without a cache. */
  registry?: RegistryClient;
  /** How many packages are hashed / registry releases checked at once (default 4 / 8). */
  hashConcurrency?: number;
  registryConcurrency?: number;
}

async function readLock(
  path: string,
  archive: LoadedArchive,
  parser: Pick<HclParser, 'parse'>,
): Promise<LockFile> {
  const content = archive.files.get(path);
  if (content === undefined) {
    return {
      path,
      readable: false,
      providers: [],
      errors: [{ message: `the lock file content was not loaded from the ${inputKind(archive)}`, line: 1 }],
    };
  }
  let result: ParseResult;
  try {
    result = await parser.parse(path, content);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    result = { ok: false, error: { path, message: `could not be parsed: ${message}`, line: 1, column: 1 } };
  }
  return parseLockFile(path, result);
}

/** Message used when a zip was listed but its bytes were not loaded (e.g. over the file-size limit). */
export function packageNotLoaded(input: InputKind): string {
  return `the package content was not loaded from the ${input}`;
}

/** Whether a package's error is `packageNotLoaded` (for either input). */
export function isPackageNotLoaded(error: string | null | undefined): boolean {
  return error === packageNotLoaded('archive') || error === packageNotLoaded('directory');
}

async function hashPackageIn(pkg: ProviderPackage, archive: LoadedArchive): Promise<HashedPackage> {
  const none = { h1: null, h1Unpacked: null, zh: null };
  if (pkg.kind === 'unpacked') {
    if (pkg.files === null) {
      return {
        ...pkg,
        ...none,
        error: 'a file of the package has no known content (a link to a missing file?)',
      };
    }
    try {
      const h1 = hashEntries(pkg.files);
      return { ...pkg, h1, h1Unpacked: h1, zh: null, error: null };
    } catch (err) {
      return { ...pkg, ...none, error: (err as Error).message };
    }
  }
  const bytes = archive.files.get(pkg.path);
  if (bytes === undefined) return { ...pkg, ...none, error: packageNotLoaded(inputKind(archive)) };
  try {
    const z = await hashZip(bytes);
    return { ...pkg, h1: z.h1Packed, h1Unpacked: z.h1, zh: z.zh, error: null };
  } catch (err) {
    return { ...pkg, ...none, error: (err as Error).message };
  }
}

/** Runs the lock-file analysis for every root module. Never throws for bad input. */
export async function analyzeLocks(input: AnalyzeLocksInput): Promise<LockAnalysis> {
  const { archive, config, parser } = input;
  const engine = input.engine ?? config.engine;
  const moduleByPath = new Map(input.modules.map((m) => [m.path, m]));

  const lockPaths = new Set<string>();
  for (const r of input.roots) {
    const lf = moduleByPath.get(r.root)?.lockFile;
    if (lf) lockPaths.add(lf);
  }
  const lockList = [...lockPaths];
  const locks = new Map<string, LockFile>();
  await mapLimit(lockList, 8, async (p) => {
    locks.set(p, await readLock(p, archive, parser));
  });

  const packages = findProviderPackages(archive, config.pluginDirs);
  const hashed = await mapLimit(packages, input.hashConcurrency ?? 4, (p) => hashPackageIn(p, archive));

  const roots: RootLockAnalysis[] = input.roots.map((r) => {
    const lockFile = moduleByPath.get(r.root)?.lockFile ?? null;
    return {
      root: r.root,
      engine: r.engine ?? engine,
      lockFile,
      lock: lockFile === null ? null : (locks.get(lockFile) ?? null),
      packages: hashed.filter((p) => packageServesRoot(p, r.root)),
      registry: [],
    };
  });

  if (config.registry) {
    const client =
      input.registry ??
      new RegistryClient({ hosts: config.registryHosts, credentials: config.credentials ?? {} });
    const wanted = new Map<string, { source: string; version: string }>();
    for (const r of roots) {
      for (const e of r.lock?.providers ?? []) {
        if (e.source === null || e.version === null || e.duplicate) continue;
        wanted.set(`${e.source} ${e.version}`, { source: e.source, version: e.version });
      }
    }
    const results = new Map<string, RegistryCheck>();
    await mapLimit([...wanted.entries()], input.registryConcurrency ?? 8, async ([key, q]) => {
      const outcome = await client.checkRelease({ ...q, engine, platforms: config.platforms });
      results.set(key, { ...q, outcome });
    });
    for (const r of roots) {
      const seen = new Set<string>();
      for (const e of r.lock?.providers ?? []) {
        const key = `${e.source} ${e.version}`;
        const check = results.get(key);
        if (check !== undefined && !seen.has(key)) {
          seen.add(key);
          r.registry.push(check);
        }
      }
    }
  }

  return { registryChecked: config.registry, platforms: [...config.platforms], roots };
}
