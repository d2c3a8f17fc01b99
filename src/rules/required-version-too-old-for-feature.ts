import { isSatisfiable, validateConstraints } from '../constraints';
import type { RuleFinding } from './types';
import type { ValueExpression } from '../modules';
import { at, compareStrings, expressionText, modulesWithParseErrors } from './helpers';
import type { Rule } from './types';

/** The first Terraform release that reads variables and locals in `required_providers`. */
const FEATURE_VERSION = '1.17.0';

/**
 * Terraform 1.17 lets `required_providers` read const variables and locals
 * (hashicorp/terraform#39153); older releases reject the file ("Invalid version constraint: Version
 * must be specified as a string", checked with terraform 1.11). A module that uses the feature should
 * say so with `required_version`, so an older CLI stops with "Unsupported Terraform Core version"
 * instead. Values Terraform rejects anyway are `invalid-version-constraint`'s; OpenTofu does not have
 * the feature (the same rule reports it there).
 */
export const requiredVersionTooOldForFeature: Rule = {
  id: 'required-version-too-old-for-feature',
  defaultSeverity: 'warning',
  summary:
    'A module whose required_providers reads variables or locals must require Terraform >= 1.17 with required_version.',
  check(ctx) {
    const out: RuleFinding[] = [];
    if (ctx.engine === 'opentofu') return out;
    const unparsed = modulesWithParseErrors(ctx);
    for (const m of ctx.modules) {
      if (m.files.some((f) => f.endsWith('.tofu') || f.endsWith('.tofu.json'))) continue;
      const uses: { what: string; e: ValueExpression }[] = [];
      for (const p of m.providers) {
        for (const [key, e] of [
          ['source', p.sourceExpression],
          ['version', p.versionExpression],
        ] as const) {
          if (e !== undefined && e.status !== 'rejected') uses.push({ what: `${key} of "${p.name}"`, e });
        }
      }
      const first = uses.sort(
        (a, b) =>
          compareStrings(a.e.location?.file ?? '', b.e.location?.file ?? '') ||
          (a.e.location?.line ?? 0) - (b.e.location?.line ?? 0),
      )[0];
      if (first === undefined) continue;
      const feature =
        `required_providers reads variables or locals (${first.what} is ${expressionText(first.e)}` +
        `${uses.length > 1 ? `, and ${uses.length - 1} more` : ''})`;
      const values = m.requiredVersions.map((r) => r.value);
      let message: string;
      if (values.length === 0) {
        // The constraint may be in the file that did not parse.
        if (unparsed.has(m.path)) continue;
        message =
          `${feature}, which Terraform older than 1.17 rejects, but the module has no terraform { required_version }, ` +
          'so an older Terraform is admitted and fails on the file';
      } else {
        if (values.some((v) => validateConstraints(v) !== null)) continue;
        if (!isSatisfiable([...values, `< ${FEATURE_VERSION}`])) continue;
        const where = m.requiredVersions.map((r) => `${r.location.file}:${r.location.line}`).join(', ');
        message =
          `${feature}, which Terraform older than 1.17 rejects, but required_version ` +
          `${values.map((v) => JSON.stringify(v)).join(' and ')} (${where}) admits such versions`;
      }
      out.push({
        module: m.path,
        ...at(first.e.location ?? null),
        message,
        note: `Require the version that reads them: terraform { required_version = ">= 1.17" } (keep any upper bound you set).`,
      });
    }
    return out;
  },
};
