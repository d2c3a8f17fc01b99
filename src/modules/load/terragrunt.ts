/**
 * The Terragrunt phase of module loading: each unit is a root made of its own files and the files
 * its `generate` blocks write (read statically by src/modules/terragrunt/), calling its source module.
 */
import { basename, compareUtf8 } from '../../archive';
import type { SrcFile } from '../assemble';
import { assembleModule } from '../assemble';
import { configExtension, isOverrideName } from '../files';
import type { GeneratedFile, RepositorySignals } from '../repository';
import { relocateGenerated } from '../terragrunt/notices';
import { LOADER_PROJECTION } from '../projection';
import type { ModuleInfo } from '../types';
import type { LoadState } from './state';

/** Terraform's override file names (`override.tf`, `*_override.tf`), in any configuration
 * extension (the JSON and `.tofu` forms too): files.ts's test, whatever the engine. */
function isOverrideFile(name: string): boolean {
  const ext = configExtension(name, 'opentofu');
  return ext !== null && isOverrideName(name, ext);
}

/** Adds one root module per Terragrunt unit to `state.modules` (replacing the unit directory's own
 * module) and returns them. A generated `required_providers` beside the source module's is a
 * `duplicate-required-providers` diagnostic, as Terraform refuses it. */
export async function addTerragruntUnits(
  state: LoadState,
  signals: RepositorySignals,
): Promise<ModuleInfo[]> {
  const { modules, parsed, diagnostics } = state;
  const out: ModuleInfo[] = [];
  for (const unit of signals.units) {
    state.signal?.throwIfAborted();
    const own = modules.get(unit.dir);
    const files: SrcFile[] = [];
    for (const path of own?.files ?? []) {
      const f = parsed.get(path);
      if (f !== undefined && !unit.generated.some((g) => basename(path) === g.name))
        files.push({ path, body: f.body });
    }
    const virtualFiles = new Map<string, GeneratedFile>();
    for (const g of unit.generated) {
      if (g.from !== null) {
        const f = parsed.get(g.from);
        if (f !== undefined) files.push({ path: g.from, body: f.body });
      } else if (g.inline !== null && (g.name.endsWith('.tf') || g.name.endsWith('.tofu'))) {
        // Parsed under a name no archive file has; every location in it is moved to the
        // `generate` block afterwards (relocateGenerated), so no finding names a missing file.
        const virtual = `${g.location.file}#generate:${g.name}`;
        virtualFiles.set(virtual, g);
        try {
          const r = await state.parser.extract(virtual, Buffer.from(g.inline, 'utf8'), LOADER_PROJECTION, {
            signal: state.signal,
          });
          if (r.ok) files.push({ path: g.location.file, body: r.file.body });
          else
            diagnostics.push({
              kind: 'terragrunt-unresolved',
              module: unit.dir,
              what: `generate (${g.name})`,
              reasons: [
                g.unknown.length > 0
                  ? `its contents, built from values tfguard could not evaluate (${g.unknown.join('; ')}), do not parse as HCL`
                  : `its contents do not parse: ${r.error.message} (line ${r.error.line} of the generated file)`,
              ],
              location: g.location,
              partial: true,
            });
        } catch (err) {
          if (state.signal?.aborted) throw err;
        }
      }
    }
    for (const u of unit.unresolved) {
      diagnostics.push({ kind: 'terragrunt-unresolved', module: unit.dir, ...u });
    }
    const { module: assembled } = assembleModule(files, []);
    const m = state.moduleFrom(
      unit.dir,
      [unit.file, ...(own?.files ?? [])],
      own?.ignoredFiles ?? [],
      assembled,
      state.engine,
    );
    if (unit.target !== unit.dir) {
      m.moduleCalls.push({
        name: 'terragrunt',
        // `tfr://` (Terragrunt's registry getter): the registry module and its `?version=`.
        source: unit.registry?.source ?? unit.source,
        sourceKind: unit.sourceKind,
        version: unit.registry?.version ?? null,
        providers: {},
        target: unit.target,
        location: unit.location,
      });
    }
    if (m.backend === null && unit.backend !== null) {
      m.backend = { kind: 'backend', type: unit.backend.type, location: unit.backend.location };
    }
    m.terragrunt = { file: unit.file, source: unit.source, generated: unit.generated.map((g) => g.name) };
    relocateGenerated(m, virtualFiles);
    modules.set(unit.dir, m);
    out.push(m);
    const source = unit.target === null ? undefined : modules.get(unit.target);
    if (source !== undefined && source !== m) {
      const names = new Set(source.generatedDeclarations ?? []);
      for (const p of m.providers) if (p.declared !== null) names.add(p.name);
      source.generatedDeclarations = [...names].sort(compareUtf8);
      // Terragrunt writes the generated files into the source module's directory: a
      // required_providers block there and one in the source module is one module with two, which
      // Terraform refuses ("Duplicate required providers configuration"; checked with terraform
      // 1.11 in test/modules/terragrunt-oracle.test.ts). Override files merge instead.
      const generatedBlock = m.requiredProvidersBlocks.find((loc) =>
        unit.generated.some((g) => (g.from ?? g.location.file) === loc.file && !isOverrideFile(g.name)),
      );
      const first = source.requiredProvidersBlocks[0];
      if (generatedBlock !== undefined && first !== undefined) {
        diagnostics.push({
          kind: 'duplicate-required-providers',
          module: unit.dir,
          location: generatedBlock,
          first,
        });
      }
    }
  }
  return out;
}
