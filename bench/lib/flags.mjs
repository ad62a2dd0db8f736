/**
 * Flags of a bench script that takes only switches (`--quick`): `--help` prints the usage and
 * exits 0, a flag it does not know is refused in one line (exit 2), so a mistyped flag never
 * starts a run of several minutes that ignores it.
 */
export function switchesOrExit(argv, name, usage, known) {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const unknown = argv.find((arg) => !known.includes(arg));
  if (unknown !== undefined) {
    process.stderr.write(`${name}: unknown option ${JSON.stringify(unknown)}\n${usage}`);
    process.exit(2);
  }
  return new Set(argv);
}
