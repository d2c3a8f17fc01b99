/** Address kinds shared by the address parsers. */

export type ModuleSourceKind = 'local' | 'registry' | 'remote' | 'unknown';
