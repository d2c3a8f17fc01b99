/**
 * The static evaluator of Terragrunt expressions, on the template strings the HCL parser renders
 * (`"${…}"`). Function semantics: https://terragrunt.gruntwork.io/docs/reference/built-in-functions/
 */
import { describe, expect, test } from '@jest/globals';
import {
  ARCHIVE_ROOT,
  Unknown,
  evaluate,
  isUnknown,
  unknownReasons,
} from '../../src/modules/terragrunt/expression';
import type { Scope, Value } from '../../src/modules/terragrunt/expression';

const FILES = new Set(['root.hcl', 'live/root.hcl', 'live/prod/env.hcl', 'modules/app/main.tf']);

function scope(locals: Record<string, Value> = {}): Scope {
  const includes: Record<string, { dir: string; local(n: string): Value }> = {
    root: { dir: '.', local: (n) => ({ region: 'eu-west-1' })[n] ?? new Unknown([`local.${n}`]) },
    env: { dir: 'live/prod', local: () => 'prod' },
  };
  return {
    unitDir: 'live/prod/app',
    fileDir: 'live/prod/app',
    parentDir: null,
    local: (n) => locals[n] ?? new Unknown([`local.${n}, which is not defined`]),
    include: (n) => includes[n] ?? null,
    includeNames: () => Object.keys(includes),
    exists: (p) => FILES.has(p),
    read: (p) => (FILES.has(p) ? `content of ${p}` : null),
  };
}

const R = ARCHIVE_ROOT;

describe('known values', () => {
  test.each<[string, unknown, Value]>([
    ['a literal', 'plain', 'plain'],
    ['get_repo_root()', '${get_repo_root()}/modules//app', `${R}/modules//app`],
    [
      'get_terragrunt_dir()',
      '${get_terragrunt_dir()}/../../../modules//app',
      `${R}/live/prod/app/../../../modules//app`,
    ],
    ['get_parent_terragrunt_dir("env")', '${get_parent_terragrunt_dir("env")}', `${R}/live/prod`],
    ['path_relative_to_include("root")', '${path_relative_to_include("root")}', 'live/prod/app'],
    ['path_relative_from_include("env")', '${path_relative_from_include("env")}', '..'],
    [
      'find_in_parent_folders("root.hcl"): the nearest',
      '${find_in_parent_folders("root.hcl")}',
      `${R}/live/root.hcl`,
    ],
    ['find_in_parent_folders("env.hcl")', '${find_in_parent_folders("env.hcl")}', `${R}/live/prod/env.hcl`],
    ['find_in_parent_folders with a fallback', '${find_in_parent_folders("none.hcl", "x")}', 'x'],
    [
      'dirname(find_in_parent_folders())',
      '${dirname(find_in_parent_folders())}/modules',
      `${R}/live/modules`,
    ],
    ['include.root.locals', '${include.root.locals.region}', 'eu-west-1'],
    ['locals and format', '${format("%s/%s", local.a, "b")}', 'x/b'],
    ['a known conditional', '${local.a == "x" ? "../m//a" : "git::https://h/r.git"}', '../m//a'],
    ['join and split', '${join("-", split("/", "a/b/c"))}', 'a-b-c'],
    ['merge and lookup', '${lookup(merge({a = 1}, {b = "two"}), "b", "none")}', 'two'],
    ['file() relative to the file', '${file("../../root.hcl")}', 'content of live/root.hcl'],
    ['nested templates', '${"${local.a}-${upper("b")}"}', 'x-B'],
    ['arithmetic and comparison', '${1 + 2 * 3 >= 7 && !false}', true],
    ['a list and an index', '${["a", "b"][1]}', 'b'],
    ['an object of templates', { source: '${local.a}//y' }, { source: 'x//y' }],
  ])('%s', (_name, input, expected) => {
    expect(evaluate(input, scope({ a: 'x' }))).toEqual(expected);
  });
});

describe('unknown values say why, and nothing runs', () => {
  test.each<[string, string, string]>([
    [
      'get_env',
      '${get_env("HOME")}/x',
      'get_env("HOME") reads an environment variable; tfguard never runs it',
    ],
    ['run_cmd', '${run_cmd("rm", "-rf", "/")}', 'run_cmd("rm") runs a command; tfguard never runs it'],
    ['an undefined local', '${local.nope}', 'local.nope, which is not defined'],
    [
      'values.* of a stack',
      '${values.name}',
      'values.* (the values a terragrunt.stack.hcl passes to a unit)',
    ],
    ['dependency outputs', '${dependency.vpc.outputs.id}', 'dependency.* (outputs of another unit'],
    [
      'an unknown function',
      '${templatefile("x.tpl", {})}',
      'the function templatefile() (not evaluated statically)',
    ],
    ['a for expression', '${[for x in local.l : x]}', 'outside what tfguard reads statically'],
    ['a missing parent file', '${find_in_parent_folders("nope.hcl")}', 'finds no file above live/prod/app'],
    ['an include that does not exist', '${get_parent_terragrunt_dir("other")}', 'no include named "other"'],
  ])('%s', (_name, input, reason) => {
    const v = evaluate(input, scope());
    expect(isUnknown(v)).toBe(true);
    expect(unknownReasons(v).join('; ')).toContain(reason);
  });

  test('an unknown condition keeps both branches', () => {
    const v = evaluate(
      '${get_env("LOCAL") == "1" ? "../../m//app" : "git::https://h/r.git//app"}/x',
      scope(),
    );
    expect(isUnknown(v)).toBe(true);
    expect((v as Unknown).branches).toEqual(['../../m//app/x', 'git::https://h/r.git//app/x']);
  });

  test('false && unknown is false; true || unknown is true', () => {
    expect(evaluate('${false && get_env("X") == "1"}', scope())).toBe(false);
    expect(evaluate('${true || get_env("X") == "1"}', scope())).toBe(true);
  });
});
