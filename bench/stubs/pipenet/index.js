// mcp-proxy imports pipenet for its --tunnel option only, which the benchmark never passes.
export async function pipenet() {
  throw new Error(
    "pipenet is stubbed in this repository (bench/stubs/pipenet): mcp-proxy --tunnel is not available here",
  );
}
