/**
 * What deployment tooling declares about a repository: the directories it runs `plan`/`apply` in.
 * Every reader in this folder is pure (archive files in, these records out); the classification
 * makes each declared directory a `root` with strong evidence, and the loader reports the ones
 * that do not exist. docs/classification.md lists the formats and the documentation they follow.
 */
import type { Engine, SourceLocation } from '../../model';

export type DeclarationTool =
  | 'Atlantis'
  | 'Digger'
  | 'Spacelift'
  | 'Terramate'
  | 'Atmos'
  | 'HCP Terraform'
  | 'env0'
  | 'CDKTF'
  | 'Terraform Stacks';

export interface DeclaredRoot {
  tool: DeclarationTool;
  /** The declared directory, archive-relative (`"."` for the top directory). */
  dir: string;
  /** The directory (or glob) as the declaration writes it. */
  written: string;
  /** The declaring file and line. */
  location: SourceLocation;
  /** What declares it, in words: `project "net"`, `stack "prod-vpc"`, `component "vpc"`. */
  label: string;
  /** Why a missing directory is only likely missing, as a condition (`if it names this repository;
   * it may name another one`): a `tfe_workspace` or `spacelift_stack` resource, an env0 `vcs`
   * block may point into another repository; Atmos may vendor components before a run. */
  uncertain?: string;
  /** Set for roots matched by a glob (Digger `generate_projects`). */
  glob?: boolean;
  /** The engine the tool runs there, when the declaration says (Digger `opentofu: true`, an env0
   * template of `type = "opentofu"`). */
  engine?: Engine;
}

/**
 * A module that configuration tfguard does not load as a module calls: a `component` of a
 * Terraform Stacks beta file (`*.tfstack.hcl`), a `module` block inside a Terramate
 * `generate_hcl` block. The target is a module run through that call, not a root of its own.
 */
export interface IndirectCall {
  /** The called directory, archive-relative. */
  target: string;
  /** The source as written. */
  written: string;
  location: SourceLocation;
  /** What calls it, in words: `component "vpc" of the Stacks beta file x.tfstack.hcl`. */
  via: string;
}

/** A Terramate stack whose Terraform code `terramate generate` writes from `generate_hcl` blocks
 * into files the repository does not hold (usually gitignored): tfguard does not run Terramate,
 * so that code is not checked. */
export interface TerramateGenerated {
  /** The stack's directory. */
  dir: string;
  /** The stack block. */
  location: SourceLocation;
  label: string;
  /** The generated file names (`_providers.tf`) missing from the directory, sorted. */
  files: string[];
}

/** A glob that declares roots (Digger `generate_projects`) but matches no directory. */
export interface EmptyGlob {
  tool: DeclarationTool;
  written: string;
  location: SourceLocation;
  label: string;
}

/** A declaration file that could not be read (malformed YAML or HCL, an unexpected shape). */
export interface DeclarationProblem {
  tool: DeclarationTool;
  location: SourceLocation;
  message: string;
}

export interface Declarations {
  roots: DeclaredRoot[];
  problems: DeclarationProblem[];
  emptyGlobs: EmptyGlob[];
  /** Terraform Stacks: `*.tfstack.hcl` files, which Terraform no longer reads. */
  legacyStackFiles: SourceLocation[];
  /** Declaration files whose project list is everything their tool plans and applies: Atlantis
   * projects without `autodiscover` `mode: enabled`, Digger projects (listed or generated). A
   * directory they leave out is not deployed by that tool. */
  completeLists: CompleteList[];
  /** Modules called from configuration that is not loaded as a module (IndirectCall). */
  indirectCalls: IndirectCall[];
  /** Terramate stacks whose Terraform code is generated and not in the repository. */
  terramateGenerated: TerramateGenerated[];
}

/** A declaration file that lists every directory its tool deploys. */
export interface CompleteList {
  tool: DeclarationTool;
  file: string;
  /** How many directories it lists. */
  count: number;
}

/** The text of a declaration file and the helpers to locate what it declares. */
export interface DeclarationFile {
  path: string;
  text: string;
}
