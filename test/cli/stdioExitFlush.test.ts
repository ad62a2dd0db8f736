/**
 * `stdio` exits once its host's input has ended and every answer is given — and not before the
 * answers have left: a 2 MB answer still queued for a host that reads slowly arrived cut off at
 * 63 KB (the pipe's share), the exit code 0. The proxy now waits for its output to be taken, for
 * at most `limits.closeTimeoutMs`.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/paths.js";
import { INITIALIZE_PARAMS } from "../helpers/rawStdio.js";
import { RAW_UPSTREAM } from "../reliability/helpers.js";

const TEXT = "x".repeat(2_000_000);

describe("stdio at exit", () => {
  it("a big last answer reaches a host that reads only after its input ended, whole", async () => {
    const proxy = spawn(process.execPath, [CLI, "stdio", "--", process.execPath, RAW_UPSTREAM], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((resolve) => proxy.on("exit", (code) => resolve(code)));
    const line = `${JSON.stringify({ jsonrpc: "2.0", id: "__ID__", result: { content: [{ type: "text", text: TEXT }] } })}\n`;
    const params = { name: "big", arguments: {}, _emit: [Buffer.from(line).toString("base64")], _noFinal: true };
    proxy.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS })}\n`,
    );
    proxy.stdin.end(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params })}\n`);
    // The host is busy: nothing is read for a while, the pipe fills and the rest waits in the proxy.
    proxy.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 800));
    const chunks: Buffer[] = [];
    proxy.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    proxy.stdout.resume();
    const ended = new Promise((resolve) => proxy.stdout.on("end", resolve));
    const late = (ms: number) => new Promise((resolve) => setTimeout(() => resolve("late"), ms));
    expect(await Promise.race([exited, late(10_000)])).toBe(0);
    await Promise.race([ended, late(2_000)]);
    const lines = Buffer.concat(chunks).toString("utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    const answer = JSON.parse(lines[1]!) as { id: number; result: { content: Array<{ text: string }> } };
    expect(answer.id).toBe(2);
    expect(answer.result.content[0]!.text).toHaveLength(TEXT.length);
  }, 20_000);
});
