/** Which stderr line tells why a stdio upstream ended (src/transports/upstream/stderrTail.ts). */
import { describe, expect, it } from "vitest";
import { StderrTail } from "../../../src/transports/upstream/stderrTail.js";

function tailOf(text: string): StderrTail {
  const tail = new StderrTail();
  for (const line of text.split("\n")) if (line.trim() !== "") tail.push(line);
  return tail;
}

const NODE_CRASH = `/srv/server.js:12
  throw new Error("MY_API_KEY is not set");
  ^

Error: MY_API_KEY is not set
    at Object.<anonymous> (/srv/server.js:12:9)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at node:internal/main/run_main_module:28:49 {
  code: 'ERR_CONFIG',
  hint: [ 'set it in env' ]
}

Node.js v20.20.2`;

describe("StderrTail", () => {
  it("a Node crash: the error line above the stack, the fields and the banner", () => {
    expect(tailOf(NODE_CRASH).telling).toEqual({ line: "Error: MY_API_KEY is not set", isLast: false });
    expect(tailOf(NODE_CRASH).last).toBe("Node.js v20.20.2");
  });

  it("an unhandled 'error' event (a connection refused): the error line, not the banner", () => {
    const refused = `starting db-backed server
node:events:502
      throw er; // Unhandled 'error' event
      ^

Error: connect ECONNREFUSED 127.0.0.1:5432
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)
Emitted 'error' event on Socket instance at:
    at emitErrorNT (node:internal/streams/destroy:169:8)
    at process.processTicksAndRejections (node:internal/process/task_queues:82:21) {
  errno: -111,
  code: 'ECONNREFUSED',
  port: 5432
}

Node.js v20.20.2`;
    expect(tailOf(refused).telling).toEqual({ line: "Error: connect ECONNREFUSED 127.0.0.1:5432", isLast: false });
  });

  it("a coded Node error and a Python traceback: their error lines", () => {
    const coded = "TypeError [ERR_INVALID_ARG_TYPE]: bad path\n    at f (x.js:1:1)\nNode.js v22.1.0";
    expect(tailOf(coded).telling?.line).toBe("TypeError [ERR_INVALID_ARG_TYPE]: bad path");
    const python = 'Traceback (most recent call last):\n  File "s.py", line 1, in <module>\nValueError: bad config';
    expect(tailOf(python).telling).toEqual({ line: "ValueError: bad config", isLast: true });
  });

  it("a missing module with its require stack, and an error whose message runs over lines: the error line", () => {
    const missing = `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module './nope'
Require stack:
- /srv/server.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Object.<anonymous> (/srv/server.js:1:1) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/server.js' ]
}

Node.js v20.20.2`;
    expect(tailOf(missing).telling).toEqual({ line: "Error: Cannot find module './nope'", isLast: false });
    const multiline =
      "Error: config is invalid:\n  port must be a number\n  host is missing\n    at f (x.js:1:1)\nNode.js v20.20.2";
    expect(tailOf(multiline).telling?.line).toBe("Error: config is invalid:");
  });

  it("an old error line the server logged before going on is not blamed for the crash", () => {
    const crash = `Error: could not reach telemetry endpoint (ignored)
server ready
/srv/crash.mjs:3
setTimeout(()=>{throw "DATABASE_URL is not set"},50);
                ^
DATABASE_URL is not set
(Use \`node --trace-uncaught ...\` to show where the exception was thrown)

Node.js v20.20.2`;
    expect(tailOf(crash).telling?.line).not.toContain("telemetry");
    const plugins = "Error: optional plugin missing\n- search\n- fetch\nNode.js v20.20.2";
    expect(tailOf(plugins).telling?.line).toBe("Node.js v20.20.2");
  });

  it("a server that went on logging after an error: its last line", () => {
    expect(tailOf("Error: retrying\nconnected\nshutting down: SIGTERM").telling).toEqual({
      line: "shutting down: SIGTERM",
      isLast: true,
    });
    expect(tailOf("error: MY_API_KEY is not set").telling?.line).toBe("error: MY_API_KEY is not set");
    expect(new StderrTail().telling).toBeUndefined();
  });
});
