import type { RuleFinding } from './types';
import { diagnosticsOf } from './helpers';
import type { Rule } from './types';

/**
 * Messages the HCL parser (src/hcl/parser.ts) gives when a file was not parsed at all, for a reason
 * that says nothing about its syntax: over its time budget, a crashed hcl2json worker, an internal
 * failure. Such a file may well be valid, so the finding must not call it a syntax error.
 */
const NOT_PARSED = /^(parser timed out after |parser crashed |internal parser error)/;

/** A file Terraform cannot parse stops every command; the rest of its module is checked without it. */
export const parseError: Rule = {
  id: 'parse-error',
  defaultSeverity: 'error',
  summary: 'Every configuration file must be valid HCL or JSON syntax.',
  check(ctx) {
    return diagnosticsOf(ctx, 'parse-error').map((d): RuleFinding => {
      if (NOT_PARSED.test(d.message)) {
        return {
          module: d.module,
          file: d.file,
          line: d.line,
          message: `${d.file} could not be parsed, so it was not checked: ${d.message}`,
          note: 'This says nothing about its syntax. Other rules skip checks that need the content of this file; a very large file can be split, or the parser budget raised (TFGUARD_PARSER_TIMEOUT_MS).',
        };
      }
      if (d.template === true) {
        return {
          module: d.module,
          file: d.file,
          line: d.line,
          message:
            `${d.file} is not valid HCL at line ${d.line}, column ${d.column} and looks like a template ` +
            `({% … %} or {{ … }}), not Terraform, so it was not checked: ${d.message}`,
          confidence: 'low',
          note: 'If it is a template rendered into Terraform elsewhere, mark its directory with fragments = ["…"] in .tfguard.hcl; if it is meant to be Terraform, fix the syntax.',
        };
      }
      return {
        module: d.module,
        file: d.file,
        line: d.line,
        message: `syntax error in ${d.file} at line ${d.line}, column ${d.column}: ${d.message}`,
        note: 'Other rules skip checks that need the missing content of this file until it parses.',
      };
    });
  },
};
