import { spawn } from "node:child_process";
import { CLI } from "./paths.js";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a real child process and collects its output. */
export function runCli(
  args: readonly string[],
  options: { input?: string | Buffer; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `mcp-normalizer ${args.join(" ")} did not finish in ${options.timeoutMs ?? 30000} ms; stderr: ${Buffer.concat(err).toString()}`,
        ),
      );
    }, options.timeoutMs ?? 30000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
    child.stdin.end(options.input ?? "");
  });
}
