import type { RuleFinding } from '../model';
import { diagnosticsOf } from './helpers';
import type { Rule } from './types';

/** A file Terraform cannot parse stops every command; the rest of its module is checked without it. */
export const parseError: Rule = {
  id: 'parse-error',
  defaultSeverity: 'error',
  summary: 'Every configuration file must be valid HCL or JSON syntax.',
  check(ctx) {
    return diagnosticsOf(ctx, 'parse-error').map((d): RuleFinding => ({
      module: d.module,
      file: d.file,
      line: d.line,
      message: `syntax error in ${d.file} at line ${d.line}, column ${d.column}: ${d.message}`,
      note: 'Other rules skip checks that need the missing content of this file until it parses.',
    }));
  },
};
