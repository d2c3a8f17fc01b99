/**
 * Terramate code generation: `generate_hcl "<file>" { content { … } }` blocks write Terraform files
 * into every stack at or below the directory of the Terramate file that holds them, when
 * `terramate generate` runs (https://terramate.io/docs/cli/code-generation/generate-hcl); the
 * generated files are often gitignored (`_*.tf`). tfguard does not run Terramate: a stack whose
 * generated files are missing gets a notice that their code was not checked, and the `module`
 * blocks of that content whose `source` is a literal, or built only from the project root and
 * stack paths (`${terramate.root.path.fs.absolute}/modules/x`,
 * https://terramate.io/docs/cli/reference/metadata), count as calls of those modules.
 */
import type { BlockSpec, HclBlock, HclBody } from '../../hcl';
import { cleanRelativePath, isLocalModuleSource, isOutsideArchive, resolveLocalTarget } from '../../addrs';
import { compareUtf8 } from '../../archive';
import { matchGlob } from '../glob';
import type { DeclaredRoot, IndirectCall, TerramateGenerated } from './types';

/** What one Terramate file generates: `generate_hcl` labels and the module sources of their contents. */
export interface TerramateGenerateFile {
  path: string;
  /** The file's directory (`"."` for the top). */
  dir: string;
  blocks: {
    label: string;
    line: number;
    modules: { name: string; source: string; line: number }[];
  }[];
}

export const TERRAMATE_GENERATE_PROJECTION: Readonly<Record<string, BlockSpec>> = {
  generate_hcl: { blocks: { content: { blocks: { module: { attributes: ['source'] } } } } },
  import: { attributes: ['source'] },
};

/** A Terramate file may `import { source = "./imports/*.tm.hcl" }` other files, whose blocks then
 * count as written in the importing directory (https://terramate.io/docs/cli/reference/blocks/import):
 * the source is relative to the importing file, or absolute from the project root. */
export function mayImport(text: string): boolean {
  return /^\s*import\s*\{/m.test(text);
}

export function readImports(path: string, body: HclBody): { dir: string; source: string }[] {
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '.';
  const out: { dir: string; source: string }[] = [];
  for (const b of body.blocks as HclBlock[]) {
    if (b.type !== 'import') continue;
    const src = b.body.attributes.find((a) => a.name === 'source');
    if (src !== undefined && typeof src.value === 'string' && !src.value.includes('${'))
      out.push({ dir, source: src.value });
  }
  return out;
}

/** The generate files an import brings into its directory (a glob of Terramate files). */
export function imported(
  imports: readonly { dir: string; source: string }[],
  files: readonly TerramateGenerateFile[],
): TerramateGenerateFile[] {
  const out: TerramateGenerateFile[] = [];
  for (const i of imports) {
    const pattern = i.source.startsWith('/')
      ? cleanRelativePath(i.source.replace(/^\/+/, ''))
      : resolveLocalTarget(i.dir, i.source);
    for (const f of files) {
      if (f.dir !== i.dir && matchGlob(pattern, f.path)) out.push({ ...f, dir: i.dir });
    }
  }
  return out;
}

/** A `generate_hcl` block in the text: files without one generate no HCL and are not read for it. */
export function mayGenerateHcl(text: string): boolean {
  return /^\s*generate_hcl\s+"/m.test(text);
}

export function readGenerateBlocks(path: string, dir: string, body: HclBody): TerramateGenerateFile {
  const blocks: TerramateGenerateFile['blocks'] = [];
  for (const b of body.blocks as HclBlock[]) {
    if (b.type !== 'generate_hcl') continue;
    const modules: TerramateGenerateFile['blocks'][number]['modules'] = [];
    for (const content of b.body.blocks) {
      if (content.type !== 'content') continue;
      for (const m of content.body.blocks) {
        if (m.type !== 'module') continue;
        const src = m.body.attributes.find((a) => a.name === 'source');
        if (src !== undefined && typeof src.value === 'string')
          modules.push({ name: m.labels[0] ?? '', source: src.value, line: src.line });
      }
    }
    blocks.push({ label: b.labels[0] ?? '', line: b.line, modules });
  }
  return { path, dir, blocks };
}

/** A file that tfguard's parser rejects: its `generate_hcl` labels from the text, no calls. */
export function readGenerateBlocksText(path: string, dir: string, text: string): TerramateGenerateFile {
  const blocks: TerramateGenerateFile['blocks'] = [];
  for (const m of text.matchAll(/^\s*generate_hcl\s+"([^"]+)"/gm)) {
    blocks.push({ label: m[1] as string, line: text.slice(0, m.index).split('\n').length, modules: [] });
  }
  return { path, dir, blocks };
}

const TERRAFORM_FILE = /\.(tf|tofu)(\.json)?$/;

function isAtOrBelow(ancestor: string, dir: string): boolean {
  return ancestor === '.' || dir === ancestor || dir.startsWith(`${ancestor}/`);
}

/** The archive directory a generated module source names, or null when it is not static. */
function generatedTarget(stackDir: string, source: string): string | null {
  const s = source
    .replace(/\$\{terramate\.root\.path\.fs\.absolute\}/g, '/')
    .replace(/\$\{terramate\.stack\.path\.absolute\}/g, stackDir === '.' ? '/' : `/${stackDir}`);
  if (s.includes('${')) return null;
  if (s.startsWith('/')) {
    const dir = cleanRelativePath(s.replace(/^\/+/, ''));
    return isOutsideArchive(dir) ? null : dir;
  }
  if (!isLocalModuleSource(s)) return null;
  const dir = resolveLocalTarget(stackDir, s);
  return isOutsideArchive(dir) ? null : dir;
}

/**
 * For each Terramate stack, the generated Terraform files the archive lacks (one record per such
 * stack) and the module calls their contents make.
 */
export function terramateGeneration(
  stacks: readonly DeclaredRoot[],
  files: readonly TerramateGenerateFile[],
  exists: (path: string) => boolean,
): { generated: TerramateGenerated[]; calls: IndirectCall[] } {
  const generated: TerramateGenerated[] = [];
  const calls: IndirectCall[] = [];
  const seen = new Set<string>();
  for (const stack of stacks) {
    if (stack.tool !== 'Terramate' || seen.has(stack.dir)) continue;
    seen.add(stack.dir);
    const missing = new Set<string>();
    for (const f of files) {
      if (!isAtOrBelow(f.dir, stack.dir)) continue;
      for (const b of f.blocks) {
        if (!TERRAFORM_FILE.test(b.label)) continue;
        const path = stack.dir === '.' ? b.label : `${stack.dir}/${b.label}`;
        if (exists(path)) continue;
        missing.add(b.label);
        for (const m of b.modules) {
          const target = generatedTarget(stack.dir, m.source);
          if (target === null) continue;
          calls.push({
            target,
            written: m.source,
            location: { file: f.path, line: m.line },
            via: `module "${m.name}" in generate_hcl "${b.label}" (${f.path}:${b.line}) of the Terramate stack "${stack.dir}"`,
          });
        }
      }
    }
    if (missing.size > 0) {
      generated.push({
        dir: stack.dir,
        location: stack.location,
        label: stack.label,
        files: [...missing].sort(compareUtf8),
      });
    }
  }
  return { generated, calls };
}
