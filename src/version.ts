/** The tool version written into reports. Kept in step with package.json by a test. */
export const TOOL_VERSION = '0.1.0';
