/**
 * The syntax tree both structural passes produce over the one lexer's tokens: the verifier
 * (`fast/verify.ts`) and the scanner (`full/scanner.ts`). `buildTree` (projection.ts) turns it into
 * an `HclBody`.
 */

export interface SyntaxAttribute {
  name: string;
  /** 1-based line of the name / of the expression's last token. */
  line: number;
  endLine: number;
  /** UTF-16 offset of the name / just past the expression's last token. */
  start: number;
  end: number;
  /** Token index range of the expression, [exprStart, exprEnd), in the lexer's stream (it may
   * begin with comments). */
  exprStart: number;
  exprEnd: number;
}

export interface SyntaxBlock {
  type: string;
  /** Label values (quoted labels unescaped, bare labels as written). */
  labels: string[];
  /** 1-based line of the type name / of the closing brace. */
  line: number;
  endLine: number;
  /** UTF-16 offset of the type name / just past the closing brace. */
  start: number;
  end: number;
  body: SyntaxBody;
}

export interface SyntaxBody {
  /** Attributes in source order. */
  attributes: SyntaxAttribute[];
  /** Blocks in source order. */
  blocks: SyntaxBlock[];
}

/** The block whose arguments get object items (`HclAttribute.items`, the source ranges of
 * `required_providers` entries). */
export const ITEMS_BLOCK = 'required_providers';

/** Lock files: the argument whose tuple elements get source ranges (`HclAttribute.elements`: one
 * range per hash string), within blocks of this type. Only `.terraform.lock.hcl` files. */
export const ELEMENTS_BLOCK = 'provider';
export const ELEMENTS_ATTRIBUTE = 'hashes';

/** The syntax the parser reads a file's bytes in, by its name: Terraform's JSON syntax for
 * `.json` names (`.tf.json`, `.tofu.json`), the native syntax otherwise. */
export function syntaxOfPath(path: string): 'hcl' | 'json' {
  return path.endsWith('.json') ? 'json' : 'hcl';
}

/** True for a dependency lock file, whose `hashes` elements are located. */
export function locatesElements(path: string): boolean {
  return path === '.terraform.lock.hcl' || path.endsWith('/.terraform.lock.hcl');
}
