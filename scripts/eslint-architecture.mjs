// The architecture rules of tfguard, as a local ESLint plugin (loaded by eslint.config.mjs).
//
// - `tfguard/layers`: every import of a file in src/ or handlers/ is resolved to the file it names,
//   and the layer of that file (the `layers` option, lowest first) must not be above the importer's.
//   Static imports, `export … from`, `import x = require(…)` and type-position `import('…')` all
//   count. Dynamic `import()` and `require()` fail everywhere but in the one `lazy` file, the AWS
//   SDK may be imported only under `sdk.allowed`, src/ imports nothing outside src/, and a file of
//   src/ that is in no layer fails (so a new directory cannot slip past the order).
// - `tfguard/no-cycle`: the import graph of src/ and handlers/ (read from disk, with the linted
//   file's own imports taken from the text being linted) has no cycle between files and none
//   between the top-level units of src/ (its directories and root files).
//
// ESLint's own `no-restricted-imports` matches specifier strings, not files, and skips `import()`;
// a rule that resolves paths cannot be dodged by `../scan/../config` or a new directory name.
// Rule API: https://eslint.org/docs/latest/extend/custom-rules
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const AWS_SDK = /^(@aws-sdk\/|@smithy\/|aws-sdk(\/|$))/;

/** The file a relative specifier names (a .ts file, a directory's index.ts), else the bare path. */
function resolveFile(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts'), base]) {
    try {
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return base;
}

/**
 * Where a file sits: `{ unit, rank }`. `unit` is `src/<dir>` or `src/<file>.ts` for src/,
 * `handlers` for handlers/, null elsewhere; `rank` its layer's index (handlers above all), or
 * undefined for a src/ unit in no layer.
 */
function placeOf(file, root, layers) {
  const rel = path.relative(root, file).split(path.sep);
  if (rel[0] === 'handlers') return { unit: 'handlers', rank: layers.length };
  if (rel[0] !== 'src' || rel.length < 2) return { unit: null, rank: undefined };
  let name = rel[1];
  if (rel.length === 2 && !isDirectory(path.join(root, 'src', name)))
    name = name.replace(/(\.ts|\.js)?$/, '.ts');
  const rank = layers.findIndex((layer) => layer.includes(name));
  return { unit: `src/${name}`, rank: rank < 0 ? undefined : rank };
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function literal(node) {
  return node && node.type === 'Literal' && typeof node.value === 'string' ? node.value : null;
}

/** Calls `visit(specifier, node, kind)` for each import of an ESTree program; kind is static or dynamic. */
function importVisitors(visit) {
  const fromSource = (node) => {
    const s = literal(node.source);
    if (s !== null) visit(s, node.source, 'static');
  };
  return {
    ImportDeclaration: fromSource,
    ExportNamedDeclaration: fromSource,
    ExportAllDeclaration: fromSource,
    TSImportEqualsDeclaration(node) {
      if (node.moduleReference.type === 'TSExternalModuleReference') {
        const s = literal(node.moduleReference.expression);
        if (s !== null) visit(s, node.moduleReference, 'static');
      }
    },
    TSImportType(node) {
      const s = literal(node.argument?.literal ?? node.argument);
      if (s !== null) visit(s, node, 'static');
    },
    ImportExpression(node) {
      visit(literal(node.source), node, 'dynamic');
    },
    CallExpression(node) {
      if (node.callee.type === 'Identifier' && node.callee.name === 'require') {
        visit(literal(node.arguments[0]), node, 'dynamic');
      }
    },
  };
}

const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports follow the layer order of src/ (docs/architecture.md).' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
          lazy: { type: 'string' },
          sdk: { type: 'string' },
        },
        required: ['root', 'layers', 'lazy', 'sdk'],
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { root, layers, lazy, sdk } = context.options[0];
    const file = context.filename;
    const rel = path.relative(root, file).split(path.sep).join('/');
    const here = placeOf(file, root, layers);
    if (here.unit === null) return {};
    if (here.rank === undefined) {
      return {
        Program(node) {
          context.report({
            node,
            message: `${here.unit} is in no layer: add it to LAYERS in eslint.config.mjs and describe it in docs/architecture.md.`,
          });
        },
      };
    }
    const isLazy = rel === lazy;
    return importVisitors((specifier, node, kind) => {
      if (kind === 'dynamic') {
        if (!isLazy) {
          context.report({
            node,
            message: `Dynamic import()/require() is allowed only in ${lazy}: import statically, or load it on first use from there (docs/architecture.md).`,
          });
        }
        // The lazy module's deferred loads are exempt from the order (they run at first use, not
        // at load time); its static imports are checked like any other file's.
        if (isLazy || specifier === null) return;
      }
      if (specifier === null) return;
      if (AWS_SDK.test(specifier)) {
        if (!rel.startsWith(sdk)) {
          context.report({ node, message: `Only storage adapters (${sdk}) import the AWS SDK.` });
        }
        return;
      }
      if (!specifier.startsWith('.')) return;
      const there = placeOf(resolveFile(file, specifier), root, layers);
      if (there.unit === here.unit) return;
      if (there.unit === null || (here.unit.startsWith('src/') && there.unit === 'handlers')) {
        if (here.unit.startsWith('src/')) {
          context.report({ node, message: `src/ imports only src/ and packages, not '${specifier}'.` });
        }
        return;
      }
      if (there.rank === undefined) {
        context.report({ node, message: `${there.unit} is in no layer (eslint.config.mjs LAYERS).` });
      } else if (there.rank > here.rank) {
        context.report({
          node,
          message: `${here.unit} is below ${there.unit} in the layer order (eslint.config.mjs LAYERS): it must not import it.`,
        });
      }
    });
  },
};

// ---- The import graph, for the cycle rule ----

/** The relative specifiers a source file imports at load time (static imports, type imports too). */
export function staticImports(fileName, text) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression;
      if (ts.isStringLiteral(e)) out.push(e.text);
    } else if (ts.isImportTypeNode(node)) {
      const a = node.argument;
      if (ts.isLiteralTypeNode(a) && ts.isStringLiteral(a.literal)) out.push(a.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out.filter((s) => s.startsWith('.'));
}

/** Strongly connected components with more than one member (or a self-import), Tarjan's algorithm. */
export function cycles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const order = new Map();
  const low = new Map();
  const found = [];
  const connect = (v) => {
    order.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!order.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), order.get(w)));
      }
    }
    if (low.get(v) === order.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? new Set()).has(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!order.has(v)) connect(v);
  return found;
}

/** A shortest path from `from` to `to` in `graph` (both included), or null. */
function pathBetween(graph, from, to) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (previous.has(w)) continue;
      previous.set(w, v);
      if (w === to) {
        const out = [w];
        for (let p = v; p !== null; p = previous.get(p)) out.unshift(p);
        return out;
      }
      queue.push(w);
    }
  }
  return null;
}

const diskCache = new Map(); // file → { mtimeMs, size, imports }
const resolved = new Map(); // file → { imports, edges }, for the listing `resolvedFor`
let resolvedFor = '';

function sourceFiles(dir, out = []) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The file import graph of src/ and handlers/ on disk, with `override` (file → text) in place. */
export function importGraph(root, override = new Map()) {
  const files = new Set([
    ...sourceFiles(path.join(root, 'src')),
    ...sourceFiles(path.join(root, 'handlers')),
  ]);
  for (const f of override.keys()) files.add(f);
  // The resolved edges of each file on disk are kept while the set of files is the same (a new or
  // removed file can change what a specifier resolves to) and the file itself is unchanged.
  const listing = [...files].sort().join('\0');
  if (resolvedFor !== listing) {
    resolved.clear();
    resolvedFor = listing;
  }
  const graph = new Map();
  for (const file of files) {
    if (override.has(file)) {
      graph.set(file, edgesOf(file, staticImports(file, override.get(file)), files));
      continue;
    }
    const stat = fs.statSync(file);
    let cached = diskCache.get(file);
    if (!cached || cached.mtimeMs !== stat.mtimeMs || cached.size !== stat.size) {
      cached = {
        mtimeMs: stat.mtimeMs,
        size: stat.size,
        imports: staticImports(file, fs.readFileSync(file, 'utf8')),
      };
      diskCache.set(file, cached);
      resolved.delete(file);
    }
    let targets = resolved.get(file);
    if (targets === undefined || targets.imports !== cached.imports) {
      targets = { imports: cached.imports, edges: edgesOf(file, cached.imports, files) };
      resolved.set(file, targets);
    }
    graph.set(file, targets.edges);
  }
  return graph;
}

function edgesOf(file, specifiers, files) {
  const targets = new Set();
  for (const s of specifiers) {
    const target = resolveFile(file, s);
    if (files.has(target)) targets.add(target);
  }
  return targets;
}

/** The graph between the top-level units of src/ (directories, root files) and handlers/. */
export function unitGraph(graph, root) {
  const unitOf = (f) => placeOf(f, root, []).unit;
  const units = new Map();
  for (const [file, targets] of graph) {
    const u = unitOf(file);
    if (u === null) continue;
    if (!units.has(u)) units.set(u, new Set());
    for (const t of targets) {
      const v = unitOf(t);
      if (v !== null && v !== u) units.get(u).add(v);
    }
  }
  return units;
}

const noCycleRule = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycle between files, nor between the directories of src/.' },
    schema: [
      {
        type: 'object',
        properties: { root: { type: 'string' } },
        required: ['root'],
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { root } = context.options[0];
    const file = context.filename;
    const rel = (f) => path.relative(root, f).split(path.sep).join('/');
    const here = placeOf(file, root, []).unit;
    if (here === null) return {};
    const edges = [];
    return {
      ...importVisitors((specifier, node, kind) => {
        if (kind === 'static' && specifier !== null && specifier.startsWith('.')) {
          edges.push({ target: resolveFile(file, specifier), node });
        }
      }),
      'Program:exit'() {
        if (edges.length === 0) return;
        const graph = importGraph(root, new Map([[file, context.sourceCode.text]]));
        const fileCycle = cycles(graph).find((c) => c.includes(file));
        const reported = new Set();
        if (fileCycle) {
          const members = new Set(fileCycle);
          for (const { target, node } of edges) {
            if (!members.has(target) || reported.has(target)) continue;
            reported.add(target);
            const loop = pathBetween(graph, target, file) ?? [target, file];
            context.report({
              node,
              message: `Import cycle: ${[file, ...loop].map(rel).join(' → ')}.`,
            });
          }
          return;
        }
        const units = unitGraph(graph, root);
        const unitCycle = cycles(units).find((c) => c.includes(here));
        if (!unitCycle) return;
        const members = new Set(unitCycle);
        for (const { target, node } of edges) {
          const unit = placeOf(target, root, []).unit;
          if (unit === here || !members.has(unit) || reported.has(unit)) continue;
          reported.add(unit);
          const back = pathBetween(units, unit, here) ?? [unit, here];
          context.report({
            node,
            message: `Import cycle between directories: ${[here, ...back].join(' → ')} (${rel(file)} imports ${rel(target)}).`,
          });
        }
      },
    };
  },
};

export default {
  meta: { name: 'tfguard-architecture' },
  rules: { layers: layersRule, 'no-cycle': noCycleRule },
};
