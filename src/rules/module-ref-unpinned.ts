import { parseRemoteModuleSource } from '../addrs';
import type { ModuleCall, ModuleInfo } from '../modules';
import type { ModuleRefPolicy } from '../model';
import { MODULE_REF_POLICIES } from '../model';
import { oneOf } from '../util/settings';
import type { RuleFinding } from './types';
import { at } from './helpers';
import type { Rule } from './types';

/**
 * What a git `ref` looks like. Offline, a tag cannot be told from a branch: only a full commit SHA
 * names one commit for good, an explicit `tags/…`/`heads/…` refname says which it is, and a semantic
 * version (`v1.2.3`, `1.2.3`) is by convention a release tag.
 */
type RefKind = 'none' | 'sha' | 'tag' | 'version-tag' | 'branch' | 'short-sha' | 'subdir' | 'other';

const FULL_SHA = /^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;
const SHORT_SHA = /^[0-9a-fA-F]{7,39}$/;
const VERSION_TAG = /^[vV]?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const TAG_REFNAME = /^(?:refs\/)?tags\/./;
const BRANCH_REFNAME = /^(?:refs\/)?heads\/./;

function refKind(ref: string): RefKind {
  if (ref === '') return 'none';
  // `repo.git?ref=v1//sub`: the `//` belongs to the query, so the ref is "v1//sub" (no git ref
  // name may contain `//`) and init fails to check it out.
  if (ref.includes('//')) return 'subdir';
  if (FULL_SHA.test(ref)) return 'sha';
  if (TAG_REFNAME.test(ref)) return 'tag';
  if (BRANCH_REFNAME.test(ref)) return 'branch';
  if (VERSION_TAG.test(ref)) return 'version-tag';
  if (SHORT_SHA.test(ref)) return 'short-sha';
  return 'other';
}

function pinned(kind: RefKind, policy: ModuleRefPolicy): boolean {
  if (kind === 'sha') return true;
  return policy === 'tag-or-sha' && (kind === 'tag' || kind === 'version-tag');
}

/** How the call is named in messages: its `module` block, or a Terragrunt unit's `terraform { source }`. */
function callLabel(m: ModuleInfo, call: ModuleCall): string {
  if (m.terragrunt !== undefined && call.location.file === m.terragrunt.file) {
    return `the Terragrunt unit "${m.path}"`;
  }
  return `module "${call.name}"`;
}

const WANT: Record<ModuleRefPolicy, string> = {
  'tag-or-sha': 'a release tag (?ref=v1.2.3) or a full commit SHA (?ref=<40 hex digits>)',
  sha: 'a full commit SHA (?ref=<40 hex digits>), as module_ref_policy = "sha" asks',
};

function describe(
  label: string,
  source: string,
  ref: string,
  kind: RefKind,
  policy: ModuleRefPolicy,
  shallow: boolean,
): { message: string; note: string } {
  const src = `git source "${source}"`;
  const want = WANT[policy];
  const noDepth = shallow
    ? ' Remove depth=…: terraform cannot make a shallow clone of a commit SHA and init fails.'
    : '';
  switch (kind) {
    case 'none':
      return {
        message: `${label} uses ${src} without a ref, so every init checks out the newest commit of the repository's default branch`,
        note: `Add ${want} to the source.`,
      };
    case 'branch':
      return {
        message: `${label} uses ${src} with ref "${ref}", a branch, so every init may check out a newer commit`,
        note: `Pin ${want} instead.${policy === 'sha' ? noDepth : ''}`,
      };
    case 'subdir': {
      const [tag = '', ...rest] = ref.split('//');
      return {
        message: `${label} uses ${src} with ref "${ref}": a //subdirectory written after the query is part of the ref, which no tag or branch can be, so terraform init fails to check it out`,
        note: `Write the subdirectory before the query: …//${rest.join('/')}?ref=${tag}.`,
      };
    }
    case 'short-sha':
      return {
        message: `${label} uses ${src} with ref "${ref}", which may be a branch (an abbreviated commit SHA is checked out like any branch or tag of that name)`,
        note: `Write the full 40-character commit SHA.${noDepth}`,
      };
    case 'other':
      return {
        message: `${label} uses ${src} with ref "${ref}", which may be a branch (tfguard cannot tell a tag from a branch offline), so init may check out a newer commit whenever it moves`,
        note:
          policy === 'sha'
            ? `Pin ${want}.${noDepth}`
            : `Pin ${want}. If "${ref}" is a tag, write it as tags/${ref} (without depth=…), or suppress this finding with the reason.`,
      };
    default:
      // a tag (by refname or version) under module_ref_policy = "sha"
      return {
        message: `${label} uses ${src} with tag "${ref}", but module_ref_policy = "sha" requires a full commit SHA (a tag can be moved to another commit)`,
        note: `Replace the ref with the commit the tag points to (git ls-remote <repository> "refs/tags/<tag>^{}"), keeping the tag in a comment.${noDepth}`,
      };
  }
}

/** OCI's digest grammar (opencontainers/image-spec descriptor.md): `algorithm:encoded`. */
const OCI_DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;

/**
 * An OCI module source (OpenTofu 1.10+): only `?digest=` names one artifact; a `?tag=` (or no
 * argument: the tag `latest`) is whatever the registry's tag points to when init runs, and a tag is
 * moved by pushing to it. Null when the source is pinned.
 */
function describeOci(
  label: string,
  source: string,
  query: ReadonlyMap<string, string>,
): { message: string; note: string } | null {
  const src = `OCI source "${source}"`;
  const tag = query.get('tag');
  const digest = query.get('digest');
  const pin = 'Pin the artifact by its manifest digest: ?digest=sha256:<hex> (keep the tag in a comment).';
  if (tag !== undefined && digest !== undefined) {
    return {
      message: `${label} uses ${src} with both a tag and a digest, which OpenTofu rejects (only one of them may be given)`,
      note: 'Keep only ?digest=sha256:<hex>.',
    };
  }
  if (digest !== undefined) {
    if (OCI_DIGEST.test(digest)) return null;
    return {
      message: `${label} uses ${src} with digest "${digest}", which is not an OCI digest (algorithm:hex), so init cannot fetch it`,
      note: pin,
    };
  }
  if (tag === undefined || tag === '') {
    return {
      message: `${label} uses ${src} without a tag or digest, so every init installs whatever the tag "latest" names then`,
      note: pin,
    };
  }
  return {
    message: `${label} uses ${src} with tag "${tag}": a tag in an OCI registry can be pushed again to name another artifact, so init may install other code under the same configuration`,
    note: pin,
  };
}

/**
 * A git module source is fetched again at every `terraform init` (modules are not in the dependency
 * lock file): without a `ref`, or with a branch, the code can change under an unchanged
 * configuration. Likewise an OCI source (OpenTofu 1.10) without a `digest`. Registry modules are
 * pinned by `version` instead (`module-version-missing`).
 */
export const moduleRefUnpinned: Rule = {
  id: 'module-ref-unpinned',
  defaultSeverity: 'warning',
  summary:
    'A module call with a git source should pin a ref that is a version tag or a full commit SHA (only a SHA with module_ref_policy = "sha"); an OCI source, a digest.',
  options: [
    {
      key: 'module_ref_policy',
      field: 'moduleRefPolicy',
      type: oneOf(MODULE_REF_POLICIES),
      default: 'tag-or-sha',
      origins: ['repository'],
      doc: 'how git module sources must be pinned: a version tag or a full commit SHA, or (`"sha"`) only a full commit SHA',
      example: '"sha"',
    },
  ],
  check(ctx) {
    const policy = ctx.config.moduleRefPolicy;
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const call of m.moduleCalls) {
        // Terraform rejects an interpolated source; Terragrunt fills it in at run time.
        if (call.sourceKind !== 'remote' || call.source === null || call.source.includes('${')) continue;
        const remote = parseRemoteModuleSource(call.source);
        if (remote?.getter === 'oci') {
          const oci = describeOci(callLabel(m, call), call.source, remote.query);
          if (oci !== null) out.push({ module: m.path, ...at(call.sourceLocation ?? call.location), ...oci });
          continue;
        }
        if (remote === null || remote.getter !== 'git') continue;
        const ref = remote.query.get('ref') ?? '';
        const kind = refKind(ref);
        if (pinned(kind, policy)) continue;
        // go-getter reads depth with strconv.Atoi; a shallow clone needs a branch or tag.
        const depthText = remote.query.get('depth') ?? '';
        const depth = /^[+-]?\d+$/.test(depthText) ? Number(depthText) : 0;
        const { message, note } = describe(callLabel(m, call), call.source, ref, kind, policy, depth > 0);
        out.push({ module: m.path, ...at(call.sourceLocation ?? call.location), message, note });
      }
    }
    return out;
  },
};
