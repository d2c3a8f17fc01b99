import { readArchiveBytes } from '../../src/archive';
import { HclParser } from '../../src/hcl';
import type { ModuleInfo } from '../../src/modules';
import type { ScanConfig } from '../../src/model';
import { loadModules } from '../../src/modules';
import type { LoadedModules } from '../../src/modules';
import { DEFAULT_CONFIG } from '../../src/scan/config-file';
import { makeTarGz } from './archive';
import type { FileMap } from './archive';

/** The scan's own defaults, so module tests load exactly what a default scan loads. */
export const BASE_CONFIG: ScanConfig = { ...DEFAULT_CONFIG };

let parser: HclParser | null = null;

/** One real parser per test file; close it in `afterAll(closeParser)`. */
export function sharedParser(): HclParser {
  parser ??= new HclParser();
  return parser;
}

export async function closeParser(): Promise<void> {
  const p = parser;
  parser = null;
  if (p) await p.close();
}

/** Packs the files into a real tar.gz, reads it with the archive reader and loads the modules. */
export async function load(files: FileMap, config: Partial<ScanConfig> = {}): Promise<LoadedModules> {
  const archive = await readArchiveBytes('inline.tar.gz', await makeTarGz(files));
  return loadModules({ archive, config: { ...BASE_CONFIG, ...config }, parser: sharedParser() });
}

export function moduleAt(loaded: LoadedModules, path: string): ModuleInfo {
  const m = loaded.modules.find((x) => x.path === path);
  if (m === undefined)
    throw new Error(`no module "${path}" (have ${loaded.modules.map((x) => x.path).join(', ')})`);
  return m;
}

export function provider(m: ModuleInfo, name: string) {
  const p = m.providers.find((x) => x.name === name);
  if (p === undefined) throw new Error(`module "${m.path}" has no provider "${name}"`);
  return p;
}
