import { compareVersions, isSatisfiable, parseVersion, validateConstraints } from '../constraints';
import type { RuleFinding } from './types';
import type { ValueExpression } from '../modules';
import { at, compareStrings, expressionText, modulesWithParseErrors } from './helpers';
import type { Rule } from './types';

/** The first Terraform release that reads variables and locals in `required_providers`. */
const FEATURE_VERSION = '1.17.0';
/** The first Terraform release that reads const variables and locals in a module's `source` and
 * `version` (the 1.15 release notes; terraform 1.11 answers "Variables not allowed"). */
const MODULE_SOURCE_TERRAFORM = '1.15.0';
/** The first OpenTofu release that evaluates variables and locals early in a module's `source` and
 * `version` (OpenTofu 1.8, opentofu/opentofu rfc/20240513-static-evaluation.md). */
const MODULE_SOURCE_OPENTOFU = '1.8.0';

interface Use {
  what: string;
  e: ValueExpression;
  /** The release that reads it. */
  since: string;
}

/** `1.17.0` → `1.17`, as messages and notes write it. */
const short = (v: string): string => v.replace(/\.0$/, '');

/**
 * Terraform 1.17 lets `required_providers` read const variables and locals
 * (hashicorp/terraform#39153); older releases reject the file ("Invalid version constraint: Version
 * must be specified as a string", checked with terraform 1.11). Terraform 1.15 lets a module's
 * `source` and `version` read them, OpenTofu 1.8 any variable and local there; older releases reject
 * them ("Variables not allowed"). A module that uses a feature should say so with
 * `required_version`, so an older CLI stops with "Unsupported Terraform Core version" instead. Values
 * the engine rejects anyway are other rules' (`invalid-version-constraint`, `module-unresolved`);
 * OpenTofu does not read variables in `required_providers` (the same rule reports it there).
 */
export const requiredVersionTooOldForFeature: Rule = {
  id: 'required-version-too-old-for-feature',
  defaultSeverity: 'warning',
  summary:
    'A module whose required_providers (Terraform 1.17) or module source/version (Terraform 1.15, OpenTofu 1.8) reads variables or locals must require that version with required_version.',
  check(ctx) {
    const out: RuleFinding[] = [];
    const unparsed = modulesWithParseErrors(ctx);
    for (const m of ctx.modules) {
      const tofu =
        ctx.engine === 'opentofu' || m.files.some((f) => f.endsWith('.tofu') || f.endsWith('.tofu.json'));
      const product = tofu ? 'OpenTofu' : 'Terraform';
      const uses: Use[] = [];
      if (!tofu) {
        for (const p of m.providers) {
          for (const [key, e] of [
            ['source', p.sourceExpression],
            ['version', p.versionExpression],
          ] as const) {
            if (e !== undefined && e.status !== 'rejected')
              uses.push({
                what: `required_providers reads variables or locals (${key} of "${p.name}" is ${expressionText(e)}`,
                e,
                since: FEATURE_VERSION,
              });
          }
        }
      }
      for (const c of m.moduleCalls) {
        for (const [key, e] of [
          ['source', c.sourceExpression],
          ['version', c.versionExpression],
        ] as const) {
          if (e !== undefined && e.status !== 'rejected')
            uses.push({
              what: `module "${c.name}" reads variables or locals in its ${key} (${expressionText(e)}`,
              e,
              since: tofu ? MODULE_SOURCE_OPENTOFU : MODULE_SOURCE_TERRAFORM,
            });
        }
      }
      if (uses.length === 0) continue;
      // The use that needs the newest release, first in file order among those.
      const newest = uses.reduce(
        (a, u) => (compareVersions(parseVersion(u.since), parseVersion(a)) > 0 ? u.since : a),
        uses[0]?.since as string,
      );
      const first = uses
        .filter((u) => u.since === newest)
        .sort(
          (a, b) =>
            compareStrings(a.e.location?.file ?? '', b.e.location?.file ?? '') ||
            (a.e.location?.line ?? 0) - (b.e.location?.line ?? 0),
        )[0] as Use;
      const feature = `${first.what}${uses.length > 1 ? `, and ${uses.length - 1} more` : ''})`;
      const older = `which ${product} older than ${short(newest)} rejects`;
      const values = m.requiredVersions.map((r) => r.value);
      let message: string;
      if (values.length === 0) {
        // The constraint may be in the file that did not parse.
        if (unparsed.has(m.path)) continue;
        message =
          `${feature}, ${older}, but the module has no terraform { required_version }, ` +
          `so an older ${product} is admitted and fails on the file`;
      } else {
        if (values.some((v) => validateConstraints(v) !== null)) continue;
        if (!isSatisfiable([...values, `< ${newest}`])) continue;
        const where = m.requiredVersions.map((r) => `${r.location.file}:${r.location.line}`).join(', ');
        message =
          `${feature}, ${older}, but required_version ` +
          `${values.map((v) => JSON.stringify(v)).join(' and ')} (${where}) admits such versions`;
      }
      out.push({
        module: m.path,
        ...at(first.e.location ?? null),
        message,
        note: `Require the version that reads them: terraform { required_version = ">= ${short(newest)}" } (keep any upper bound you set).`,
      });
    }
    return out;
  },
};
