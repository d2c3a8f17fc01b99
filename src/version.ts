/** The tool version written into reports. Kept in step with package.json by a test. */
export const TOOL_VERSION = '0.1.0';

/** The project's repository (package.json `repository` and `homepage`; kept in step by a test). */
export const REPOSITORY_URL = 'https://github.com/tfguard/tfguard';

/**
 * Where the documentation of this version lives: rule pages are `<DOCS_URL>/rules/<rule-id>.md`.
 * Reports link there with absolute URLs (SARIF `helpUri`), so the links work wherever a report is
 * shown (code scanning of another repository, a CI artifact). `TFGUARD_DOCS_URL` replaces it (a
 * mirror, an internal fork).
 */
export const DOCS_URL = `${REPOSITORY_URL}/blob/v${TOOL_VERSION}/docs`;
