/**
 * Whether a configured command, argument or environment value is one a process can be started
 * with: no NUL character (C strings end at it). Node refuses such a value when it spawns, and
 * its error quotes the value — an `env` secret would reach hosts, `/healthz` and the log — so
 * it is refused when the config is read, by name, never quoted.
 */
export function isSpawnValue(value: string): boolean {
  return !value.includes("\0");
}

/** Why a value is refused, for an error that names the field (the value is not shown). */
export const NOT_A_SPAWN_VALUE =
  "holds a NUL character, which no command line or environment can carry (the value is not shown)";
