/**
 * The dependency lock file grammar, decoded the way Terraform decodes it
 * (hashicorp/terraform internal/depsfile/locks_file.go): only `provider "HOST/NS/TYPE"` blocks
 * (`module` blocks are ignored with a warning there, ignored here), each with a required `version`
 * (one exact version in normalized form), an optional `constraints` (normalized form) and an
 * optional non-empty `hashes` list of `scheme:value` strings. The block label must be the
 * fully-qualified, normalized source address; a second block for one provider is an error.
 *
 * Input is the position-carrying body from the shared HCL parser, which locates every block,
 * argument and (in lock files) each element of `hashes`: entries, arguments and hashes carry their
 * source ranges, so lock findings point at the exact text.
 */
import { formatVersion, isNormalized, parseConstraints, parseVersion } from '../constraints';
import type { HclAttribute, HclBlock, ParseResult } from '../hcl';
import type { SourceRange } from '../model';
import { parseProviderSource } from '../addrs';
import type { LockFile, LockHash, LockParseError, LockProviderEntry } from './types';

const BUILTIN_HOST = 'terraform.io';

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string' && /^\$\{[\s\S]*\}$/.test(value)) return `the expression ${value}`;
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${JSON.stringify(value)}`;
}

/** A template-only string (`"${...}"`) stands for a non-literal expression in hcl2json's output. */
function isExpression(value: unknown): boolean {
  return typeof value === 'string' && /^\$\{[\s\S]*\}$/.test(value);
}

function decodeAddress(block: HclBlock, errors: LockParseError[]): { source: string | null; fatal: boolean } {
  const raw = block.labels[0] as string;
  const parsed = parseProviderSource(raw, 'terraform');
  if (!parsed.ok || raw.split('/').length !== 3) {
    errors.push({
      message: `invalid provider source address "${raw}": a lock entry must name a valid, fully-qualified address of the form "hostname/namespace/type"${parsed.ok ? '' : ` (${parsed.error})`}`,
      line: block.line,
      range: block.range,
    });
    return { source: parsed.ok ? parsed.source : null, fatal: !parsed.ok };
  }
  const [host, namespace] = parsed.source.split('/') as [string, string, string];
  if (host === BUILTIN_HOST && namespace === 'builtin') {
    errors.push({
      message: `cannot lock a version for the built-in provider ${parsed.source}: it is bundled inside Terraform`,
      line: block.line,
      range: block.range,
    });
    return { source: null, fatal: true };
  }
  if (parsed.source !== raw) {
    errors.push({
      message: `non-normalized provider source address "${raw}": it must be written as "${parsed.source}", the fully-qualified and normalized form`,
      line: block.line,
      range: block.range,
    });
  }
  return { source: parsed.source, fatal: false };
}

function decodeVersion(
  attr: HclAttribute | undefined,
  address: string,
  block: HclBlock,
  errors: LockParseError[],
): string | null {
  if (attr === undefined) {
    errors.push({
      message: `the lock entry for ${address} has no "version" argument (it is required)`,
      line: block.line,
      range: block.range,
    });
    return null;
  }
  if (typeof attr.value !== 'string' || isExpression(attr.value)) {
    errors.push({
      message: `the "version" of ${address} must be a literal string, not ${describe(attr.value)}`,
      line: attr.line,
      range: attr.range,
    });
    return null;
  }
  let canonical: string;
  try {
    canonical = formatVersion(parseVersion(attr.value));
  } catch (err) {
    errors.push({
      message: `invalid version ${JSON.stringify(attr.value)} for ${address}: ${(err as Error).message}`,
      line: attr.line,
      range: attr.range,
    });
    return null;
  }
  if (canonical !== attr.value) {
    errors.push({
      message: `the version of ${address} must be written in normalized form: "${canonical}", not ${JSON.stringify(attr.value)}`,
      line: attr.line,
      range: attr.range,
    });
    return canonical;
  }
  return canonical;
}

function decodeConstraints(
  attr: HclAttribute | undefined,
  address: string,
  errors: LockParseError[],
): { value: string | null; invalid: boolean } {
  if (attr === undefined) return { value: null, invalid: false };
  if (typeof attr.value !== 'string' || isExpression(attr.value)) {
    errors.push({
      message: `the "constraints" of ${address} must be a literal string, not ${describe(attr.value)}`,
      line: attr.line,
      range: attr.range,
    });
    return { value: null, invalid: true };
  }
  try {
    parseConstraints(attr.value, { grammar: 'lock' });
  } catch (err) {
    errors.push({
      message: `invalid recorded constraints ${JSON.stringify(attr.value)} for ${address}: ${(err as Error).message}`,
      line: attr.line,
      range: attr.range,
    });
    return { value: attr.value, invalid: true };
  }
  if (!isNormalized(attr.value)) {
    errors.push({
      message: `the recorded constraints ${JSON.stringify(attr.value)} of ${address} are not in Terraform's normalized form`,
      line: attr.line,
      range: attr.range,
    });
    return { value: attr.value, invalid: true };
  }
  return { value: attr.value, invalid: false };
}

function decodeHashes(attr: HclAttribute | undefined, address: string, errors: LockParseError[]): LockHash[] {
  if (attr === undefined) return [];
  if (!Array.isArray(attr.value)) {
    errors.push({
      message: `the "hashes" of ${address} must be a list of strings, not ${describe(attr.value)}`,
      line: attr.line,
      range: attr.range,
    });
    return [];
  }
  const values = attr.value as unknown[];
  if (values.length === 0) {
    errors.push({
      message: `the "hashes" of ${address} must either be omitted or contain at least one hash`,
      line: attr.line,
      range: attr.range,
    });
    return [];
  }
  // Each element's own range when the parser located it (a tuple constructor), else the argument's.
  const elements = attr.elements?.length === values.length ? attr.elements : null;
  const out: LockHash[] = [];
  values.forEach((v, i) => {
    const range = elements === null ? attr.range : (elements[i] as SourceRange);
    const line = range.start.line;
    if (typeof v !== 'string' || isExpression(v)) {
      errors.push({
        message: `a hash of ${address} must be a literal string, not ${describe(v)}`,
        line,
        range,
      });
      return;
    }
    if (v.indexOf(':') < 1) {
      errors.push({
        message: `cannot interpret ${JSON.stringify(v)} (a hash of ${address}) as a provider hash: it must start with a scheme keyword followed by a colon`,
        line,
        range,
      });
      return;
    }
    out.push({ value: v, line, range });
  });
  return out;
}

/** Decodes a parsed `.terraform.lock.hcl`. */
export function parseLockFile(path: string, result: ParseResult): LockFile {
  if (!result.ok) {
    return {
      path,
      readable: false,
      providers: [],
      errors: [
        { message: `the lock file cannot be parsed: ${result.error.message}`, line: result.error.line },
      ],
    };
  }
  const errors: LockParseError[] = [];
  const providers: LockProviderEntry[] = [];
  const body = result.file.body;
  for (const attr of body.attributes) {
    errors.push({
      message: `unsupported argument "${attr.name}": a lock file contains only provider blocks`,
      line: attr.line,
      range: attr.range,
    });
  }
  const firstLine = new Map<string, number>();
  for (const block of body.blocks) {
    if (block.type === 'module') continue; // reserved by Terraform for future use; it only warns
    if (block.type !== 'provider') {
      errors.push({
        message: `unsupported block type "${block.type}": a lock file contains only provider blocks`,
        line: block.line,
        range: block.range,
      });
      continue;
    }
    if (block.labels.length !== 1) {
      errors.push({
        message: `a provider lock block needs exactly one label (the provider source address), found ${block.labels.length}`,
        line: block.line,
        range: block.range,
      });
      continue;
    }
    const address = block.labels[0] as string;
    const { source: normalized, fatal } = decodeAddress(block, errors);
    if (fatal && normalized === null) {
      // Terraform skips the whole block; so do the other rules.
      providers.push(emptyEntry(address, block));
      continue;
    }
    const attrs = new Map(block.body.attributes.map((a) => [a.name, a]));
    for (const a of block.body.attributes) {
      if (a.name !== 'version' && a.name !== 'constraints' && a.name !== 'hashes') {
        errors.push({
          message: `unsupported argument "${a.name}" in the lock entry for ${address}; only version, constraints and hashes are allowed`,
          line: a.line,
          range: a.range,
        });
      }
    }
    for (const b of block.body.blocks) {
      errors.push({
        message: `unsupported block "${b.type}" in the lock entry for ${address}`,
        line: b.line,
        range: b.range,
      });
    }
    const versionAttr = attrs.get('version');
    const constraintsAttr = attrs.get('constraints');
    const hashesAttr = attrs.get('hashes');
    const version = decodeVersion(versionAttr, address, block, errors);
    const constraints = decodeConstraints(constraintsAttr, address, errors);
    const hashes = decodeHashes(hashesAttr, address, errors);
    let duplicate = false;
    if (normalized !== null) {
      const first = firstLine.get(normalized);
      if (first !== undefined) {
        duplicate = true;
        errors.push({
          message: `duplicate lock entry for provider ${normalized}: the file already has one at line ${first}`,
          line: block.line,
          range: block.range,
        });
      } else firstLine.set(normalized, block.line);
    }
    providers.push({
      address,
      source: normalized,
      line: block.line,
      endLine: block.endLine,
      range: block.range,
      version,
      versionLine: versionAttr?.line ?? null,
      versionRange: versionAttr?.range ?? null,
      constraints: constraints.value,
      constraintsLine: constraintsAttr?.line ?? null,
      constraintsRange: constraintsAttr?.range ?? null,
      constraintsInvalid: constraints.invalid,
      hashes,
      hashesLine: hashesAttr?.line ?? null,
      hashesRange: hashesAttr?.range ?? null,
      duplicate,
    });
  }
  errors.sort((a, b) => a.line - b.line);
  return { path, readable: true, providers, errors };
}

function emptyEntry(address: string, block: HclBlock): LockProviderEntry {
  return {
    address,
    source: null,
    line: block.line,
    endLine: block.endLine,
    range: block.range,
    version: null,
    versionLine: null,
    versionRange: null,
    constraints: null,
    constraintsLine: null,
    constraintsRange: null,
    constraintsInvalid: false,
    hashes: [],
    hashesLine: null,
    hashesRange: null,
    duplicate: false,
  };
}
