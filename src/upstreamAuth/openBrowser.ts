/**
 * Opens a URL in the system browser, without a shell (the URL is one argument). Failure is
 * silent: the URL is always printed as well, and a headless machine has no browser to open.
 */
import { spawn } from "node:child_process";

export function openInBrowser(url: string): void {
  const [command, args]: [string, string[]] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["rundll32", ["url.dll,FileProtocolHandler", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no opener on this machine: the printed URL is the way
  }
}
