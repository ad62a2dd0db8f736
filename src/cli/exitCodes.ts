/** Exit codes of every command (documented in the README and in `--help`). */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** A runtime failure: the upstream could not be started or reached, a listener failed. */
  FAILURE: 1,
  /** Bad command line, unreadable/invalid input (a JSON file that is not JSON), a log file that cannot be written. */
  USAGE: 2,
  /** The config file is missing, not JSON, or not valid. */
  CONFIG: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
