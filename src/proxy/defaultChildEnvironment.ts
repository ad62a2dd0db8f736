/**
 * The variables desktop hosts pass to the stdio servers they spawn — the same list and rule as
 * the MCP SDK's `getDefaultEnvironment()` (a sudo-like allow-list; values that look like shell
 * functions are left out). Kept here so starting a proxy does not load the SDK's client.
 */
const INHERITED =
  process.platform === "win32"
    ? [
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
        "PROGRAMFILES",
      ]
    : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/** Whether desktop hosts pass `name` to every server they spawn (so it is nobody's secret). */
export function isDefaultChildVariable(name: string): boolean {
  return INHERITED.includes(name);
}

export function defaultChildEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of INHERITED) {
    const value = env[key];
    if (value === undefined || value.startsWith("()")) continue;
    out[key] = value;
  }
  return out;
}
