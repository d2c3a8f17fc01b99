/**
 * tfguard's parsing layer for HCL native syntax and Terraform's JSON syntax.
 */
export { HclParser, DEFAULT_MAX_NESTING_DEPTH, defaultTimeoutMs, fastParse } from './parser';
export type { HclParserOptions, ParserStats } from './parser';
export { EMPTY_BODY, FULL_SPEC, projectBody, specFingerprint } from './projection';
export { movedResult, pathVariant } from './moved';
export { syntaxOfPath } from './syntax';
export type { BlockSpec } from './projection';
export { verifyHcl } from './fast/verify';
export { hcl2jsonMain, hcl2jsonPackageJson } from './full/locate';
export type { VerifyResult } from './fast/verify';
export { decodeSource } from './decode';
export type { DecodeResult } from './decode';
export { scanHcl } from './full/scanner';
export type { SyntaxAttribute, SyntaxBlock, SyntaxBody } from './syntax';
export type { ScanBody, ScanComment, ScanError, ScannerOptions, ScanResult } from './full/scanner';
export { parseJsonConfig, parseJsonWithPositions } from './json';
export type { JsonNode } from './json';
export { hasInterpolation, stripTemplate, templateParts } from './template';
export type { TemplatePart } from './template';
export type * from './types';
