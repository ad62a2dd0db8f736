/**
 * The official reference servers as real upstreams: the everything server's
 * text-in-base64 blob template comes back as text; the filesystem server's read_media_file on
 * a `.md` file comes back as a text resource with text/markdown.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, EVERYTHING_SERVER, FILESYSTEM_SERVER } from "../helpers/paths.js";
import { connect, hostTransport, raw, startServe, type Connected, type ServeProcess } from "../helpers/proxyProcess.js";
import { tempDir } from "../helpers/tempDir.js";

describe("the everything server through the proxy", () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(["--name", "everything", "--", process.execPath, EVERYTHING_SERVER, "stdio"]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  for (const kind of ["stdio", "mcp", "ws"] as const) {
    it(`demo://resource/dynamic/blob/1 comes back as text over ${kind}`, async () => {
      const host: Connected = await connect(
        kind === "stdio"
          ? new StdioClientTransport({
              command: process.execPath,
              args: [CLI, "stdio", "--", process.execPath, EVERYTHING_SERVER, "stdio"],
              stderr: "pipe",
            })
          : hostTransport(kind, { url: serve.url, name: "everything" }),
      );
      try {
        const result = await raw(host.client, "resources/read", { uri: "demo://resource/dynamic/blob/1" });
        const [entry] = result.contents as Array<Record<string, unknown>>;
        expect(entry).toMatchObject({ uri: "demo://resource/dynamic/blob/1", mimeType: "text/plain" });
        expect(entry!.blob).toBeUndefined();
        expect(entry!.text).toMatch(/^Resource 1: This is a base64 blob/);
        // Templates list: the blob template's generic type has no extension to fill it from, so it stays.
        const templates = await raw(host.client, "resources/templates/list");
        expect((templates.resourceTemplates as unknown[]).length).toBeGreaterThan(0);
      } finally {
        await host.close();
      }
    });
  }
});

describe("the filesystem server through the proxy", () => {
  it("read_media_file on a .md file comes back as a text resource with text/markdown", async () => {
    const dir = tempDir("mcpn-fs-");
    writeFileSync(join(dir, "notes.md"), "# Notes\n\nGrüße aus dem Test.\n");
    writeFileSync(
      join(dir, "pixel.png"),
      Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==",
        "base64",
      ),
    );
    const host = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "stdio", "--", process.execPath, FILESYSTEM_SERVER, dir],
        stderr: "pipe",
      }),
    );
    try {
      const direct = await connect(
        new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, dir], stderr: "pipe" }),
      );
      const upstream = await raw(direct.client, "tools/call", {
        name: "read_media_file",
        arguments: { path: join(dir, "notes.md") },
      });
      await direct.close();
      const result = await raw(host.client, "tools/call", {
        name: "read_media_file",
        arguments: { path: join(dir, "notes.md") },
      });
      const items = result.content as Array<Record<string, unknown>>;
      const upstreamItems = upstream.content as Array<Record<string, unknown>>;
      // What the server sends: a generic blob; what the host gets: text/markdown text.
      expect(JSON.stringify(upstreamItems)).toContain("application/octet-stream");
      const resource = items.find((item) => item.type === "resource")?.resource as Record<string, unknown> | undefined;
      expect(resource).toBeDefined();
      expect(resource!.mimeType).toBe("text/markdown");
      expect(resource!.text).toBe("# Notes\n\nGrüße aus dem Test.\n");
      expect(resource!.blob).toBeUndefined();
      const png = await raw(host.client, "tools/call", {
        name: "read_media_file",
        arguments: { path: join(dir, "pixel.png") },
      });
      expect(JSON.stringify(png)).toContain("image/png");
    } finally {
      await host.close();
    }
  });
});
