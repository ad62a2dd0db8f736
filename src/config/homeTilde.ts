/**
 * A path starting with `~` (`~/logs`, `~alice/logs`): a shell would have read it as a home
 * folder, but no shell reads a desktop host's arguments or a config file, so it would name a
 * folder called `~` in the working directory. Such paths are refused; `./~name` is taken as written.
 */
export function startsWithTilde(path: string): boolean {
  return path.startsWith("~");
}

export const TILDE_NOT_EXPANDED = '"~" is not expanded here';
