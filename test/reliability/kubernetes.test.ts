/**
 * docs/kubernetes.md's manifests, checked without a cluster: every YAML object is validated
 * against the Kubernetes API schemas (kubernetes-models, generated from the API's OpenAPI
 * document, like kubeconform's); then the two rules the kubelet enforces that a schema cannot
 * see — `runAsNonRoot` needs a numeric user, and probes reach the pod's address, never its
 * loopback — are checked on every pod; then each mcp-normalizer container's `args` start the
 * proxy as a process (the image's ENTRYPOINT mapped onto this checkout, its config file from
 * the ConfigMap, its env from the Secret) and its probes run against it, as the kubelet would
 * run them, and fail once it stopped.
 */
import { execFile, spawn } from "node:child_process";
import { request } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join, posix } from "node:path";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Pod } from "kubernetes-models/v1/Pod";
import { Secret } from "kubernetes-models/v1/Secret";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { execForm, finalInstruction, imageEnv } from "../helpers/dockerfile.js";
import { ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempDir.js";

interface Probe {
  httpGet?: { path: string; port: number | string; httpHeaders?: Array<{ name: string; value: string }> };
  tcpSocket?: unknown;
  grpc?: unknown;
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
    containers: Container[];
    volumes?: Array<{ name: string; configMap?: { name: string } }>;
  };
}

const DOC = readFileSync(join(ROOT, "docs", "kubernetes.md"), "utf8");
const BLOCKS = [...DOC.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
const OBJECTS: K8sObject[] = BLOCKS.flatMap((block) =>
  parseAllDocuments(block).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`docs/kubernetes.md: YAML error: ${doc.errors[0]!.message}`);
    return doc.toJS() as K8sObject;
  }),
);
const PODS = OBJECTS.filter((o) => o.kind === "Pod");
const MODELS: Record<string, { validate(): void }> = {};
const modelOf = (o: K8sObject): { validate(): void } => {
  const make = {
    Pod: (x: K8sObject) => new Pod(x as never),
    Secret: (x: K8sObject) => new Secret(x as never),
    ConfigMap: (x: K8sObject) => new ConfigMap(x as never),
    NetworkPolicy: (x: K8sObject) => new NetworkPolicy(x as never),
  }[o.kind];
  if (make === undefined) throw new Error(`${o.kind} ${o.metadata.name}: no schema wired up for this kind`);
  const key = `${o.kind}/${o.metadata.name}`;
  const model = MODELS[key] ?? make(o);
  MODELS[key] = model;
  return model;
};

const isProxy = (c: Container): boolean => /mcp-normalizer/.test(c.image);
const PROXIES = PODS.flatMap((pod) => pod.spec!.containers.filter(isProxy).map((container) => ({ pod, container })));
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

const flag = (args: readonly string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};

function byName<T extends K8sObject>(kind: string, name: string): T {
  const found = OBJECTS.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`${kind} ${name} is referenced but not in docs/kubernetes.md`);
  return found as T;
}

/** The contents of `path` inside the container: a key of a mounted ConfigMap. */
function mountedFile(pod: K8sObject, container: Container, path: string): string {
  for (const mount of container.volumeMounts ?? []) {
    if (!path.startsWith(`${mount.mountPath}/`)) continue;
    const configMapName = pod.spec!.volumes?.find((v) => v.name === mount.name)?.configMap?.name;
    if (configMapName === undefined) continue;
    const content = byName("ConfigMap", configMapName).data?.[posix.relative(mount.mountPath, path)];
    if (content !== undefined) return content;
  }
  throw new Error(`${container.name}: ${path} is not in a mounted ConfigMap`);
}

/** The proxy's listen address and auth, as its args (and config file, when given) say. */
function listener(
  pod: K8sObject,
  container: Container,
): { host: string; port: number; tokens: number; config: string | undefined } {
  const args = container.args ?? [];
  const configPath = flag(args, "--config");
  const config = configPath === undefined ? undefined : mountedFile(pod, container, configPath);
  const parsed =
    config === undefined
      ? {}
      : (JSON.parse(config) as { listen?: { host?: string; port?: number }; auth?: { bearerTokens?: string[] } });
  return {
    host: flag(args, "--host") ?? parsed.listen?.host ?? "127.0.0.1",
    port: Number(flag(args, "--port") ?? parsed.listen?.port ?? 8808),
    tokens: parsed.auth?.bearerTokens?.length ?? 0,
    config,
  };
}

function containerEnv(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref === undefined) env[e.name] = e.value ?? "";
    else {
      const secret = byName("Secret", ref.name);
      const value =
        secret.stringData?.[ref.key] ??
        (secret.data?.[ref.key] === undefined ? undefined : Buffer.from(secret.data[ref.key]!, "base64").toString());
      if (value === undefined) throw new Error(`${container.name}: Secret ${ref.name} has no key ${ref.key}`);
      env[e.name] = value;
    }
  }
  return env;
}

const probesOf = (c: Container): Array<[string, Probe]> =>
  (["readinessProbe", "livenessProbe"] as const).flatMap((k) =>
    c[k] === undefined ? [] : [[k, c[k]!] as [string, Probe]],
  );

/** GET as the kubelet does: to the pod's address (here loopback), `Host` the pod IP and port. */
function httpProbe(port: number, path: string, hostHeader: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host: hostHeader }, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve(0));
    req.end();
  });
}

function execProbe(command: readonly string[], env: Record<string, string>): Promise<number> {
  const [cmd, ...rest] = command;
  return new Promise((resolve) => {
    execFile(
      cmd === "node" ? process.execPath : cmd!,
      rest,
      { env: { ...process.env, ...env }, timeout: 10_000 },
      (error) => resolve(error === null ? 0 : typeof error.code === "number" ? error.code : -1),
    );
  });
}

describe("docs/kubernetes.md", () => {
  it("holds both layouts' manifests, and every object is valid for the Kubernetes API", () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(2);
    expect(OBJECTS.map((o) => o.kind).sort()).toEqual([
      "ConfigMap",
      "NetworkPolicy",
      "NetworkPolicy",
      "Pod",
      "Pod",
      "Secret",
    ]);
    for (const o of OBJECTS) expect(() => modelOf(o).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
  });

  it("the schema check bites: a string port and a missing container list are refused", () => {
    const pod = structuredClone(PODS[0]!);
    pod.spec!.containers[1]!.ports = [{ containerPort: "8808" as unknown as number }];
    expect(() => new Pod(pod as never).validate()).toThrow(/containerPort must be integer/);
    expect(() => new Pod({ ...pod, spec: {} } as never).validate()).toThrow(/must have required property .?containers/);
  });

  it("under runAsNonRoot, every container runs as a numeric non-root user; the proxy's is the Dockerfile's USER", () => {
    const dockerUser = finalInstruction("USER")!.args;
    expect(dockerUser, "the image's USER must be numeric for runAsNonRoot").toMatch(/^[1-9]\d*(:\d+)?$/);
    for (const pod of PODS) {
      const podContext = pod.spec!.securityContext ?? {};
      for (const container of pod.spec!.containers) {
        const nonRoot = container.securityContext?.runAsNonRoot ?? podContext.runAsNonRoot;
        expect(nonRoot, `${pod.metadata.name}/${container.name}: runAsNonRoot`).toBe(true);
        const uid = container.securityContext?.runAsUser ?? podContext.runAsUser;
        // Without a numeric runAsUser the kubelet takes the image's USER: a name or root is refused.
        expect(uid, `${pod.metadata.name}/${container.name}: runAsUser`).toEqual(expect.any(Number));
        expect(uid).toBeGreaterThan(0);
        if (isProxy(container)) expect(String(uid)).toBe(dockerUser.split(":")[0]);
      }
    }
  });

  it("a proxy on loopback is probed by exec only; one beyond loopback has a bearer token; each is probed", () => {
    expect(PROXIES.length).toBe(2);
    const kinds = new Set<string>();
    for (const { pod, container } of PROXIES) {
      const { host, tokens } = listener(pod, container);
      const loopback = LOOPBACK.has(host);
      kinds.add(loopback ? "loopback" : "pod address");
      const probes = probesOf(container);
      expect(probes.map(([k]) => k).sort(), `${container.name}: probes`).toEqual(["livenessProbe", "readinessProbe"]);
      for (const [name, probe] of probes) {
        if (loopback) {
          // The kubelet probes the pod's IP: an HTTP or TCP probe of a loopback listener always fails.
          expect(
            probe.httpGet ?? probe.tcpSocket ?? probe.grpc,
            `${pod.metadata.name} ${name} on a loopback listener`,
          ).toBeUndefined();
          expect(probe.exec?.command.length).toBeGreaterThan(0);
        } else {
          expect(probe.httpGet?.path ?? probe.exec, `${pod.metadata.name} ${name}`).toBeDefined();
        }
      }
      if (!loopback)
        expect(tokens, `${pod.metadata.name}: listening on ${host} needs auth.bearerTokens`).toBeGreaterThan(0);
    }
    expect([...kinds].sort()).toEqual(["loopback", "pod address"]);
  });

  it("each pod has a NetworkPolicy that admits no port but its proxy's, when it listens beyond loopback at all", () => {
    interface Policy {
      metadata: { name: string };
      spec: {
        podSelector: { matchLabels?: Record<string, string> };
        policyTypes?: string[];
        ingress?: Array<{ ports?: Array<{ port?: number | string }> }>;
      };
    }
    const policies = OBJECTS.filter((o) => o.kind === "NetworkPolicy") as unknown as Policy[];
    for (const { pod, container } of PROXIES) {
      const labels = (pod.metadata as { labels?: Record<string, string> }).labels ?? {};
      const selecting = policies.filter((p) =>
        Object.entries(p.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v),
      );
      expect(selecting.length, `${pod.metadata.name}: NetworkPolicies selecting it`).toBe(1);
      const policy = selecting[0]!;
      expect(policy.spec.policyTypes, policy.metadata.name).toContain("Ingress");
      const { host, port } = listener(pod, container);
      const admitted = (policy.spec.ingress ?? []).map((rule) => {
        // A rule without ports admits every port: the upstream's too.
        expect(rule.ports?.length ?? 0, `${policy.metadata.name}: a rule without ports`).toBeGreaterThan(0);
        return rule.ports!.map((p) => Number(p.port));
      });
      expect(admitted.flat(), policy.metadata.name).toEqual(LOOPBACK.has(host) ? [] : [port]);
    }
  });

  it.each(PROXIES.map(({ pod, container }) => [pod.metadata.name, pod, container] as const))(
    "%s: the proxy container's args start the proxy, and its probes pass against it (and fail once it stopped)",
    async (_name, pod, container) => {
      const { host, port, config } = listener(pod, container);
      const env = containerEnv(container);
      // The image's ENTRYPOINT, with /app mapped onto this checkout; the config file from the ConfigMap; any free port.
      const workdir = finalInstruction("WORKDIR")!.args;
      const entrypoint = execForm(finalInstruction("ENTRYPOINT")!.args).map((a, i) =>
        i === 0 && a === "node"
          ? process.execPath
          : a.startsWith(`${workdir}/`)
            ? join(ROOT, a.slice(workdir.length + 1))
            : a,
      );
      const args = [...(container.args ?? [])];
      const configAt = args.indexOf("--config");
      if (configAt !== -1) {
        const file = join(tempDir("mcpn-k8s-"), "proxy.config.json");
        writeFileSync(file, config!);
        args[configAt + 1] = file;
      }
      const portAt = args.indexOf("--port");
      if (portAt === -1) args.push("--port", "0");
      else args[portAt + 1] = "0";
      const child = spawn(entrypoint[0]!, [...entrypoint.slice(1), ...args], {
        cwd: tempDir("mcpn-k8s-"),
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      try {
        let stderr = "";
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        const url = await new Promise<string>((resolve, reject) => {
          let out = "";
          const timer = setTimeout(
            () => reject(new Error(`not listening within 20 s; stderr: ${stderr.slice(-1500)}`)),
            20_000,
          );
          child.stdout.on("data", (c: Buffer) => {
            out += c.toString();
            const m = /listening on (http:\/\/\S+)/.exec(out);
            if (m) {
              clearTimeout(timer);
              resolve(m[1]!);
            }
          });
          void exited.then((code) => reject(new Error(`exited ${code}; stderr: ${stderr.slice(-1500)}`)));
        });
        expect(new URL(url).hostname).toBe(host);
        const actualPort = Number(new URL(url).port);

        const run = async (probe: Probe): Promise<boolean> => {
          if (probe.httpGet !== undefined) {
            const target = probe.httpGet.port;
            const probePort =
              typeof target === "number" ? target : container.ports?.find((p) => p.name === target)?.containerPort;
            expect(probePort, "the probe's port is the port the proxy listens on").toBe(port);
            const status = await httpProbe(actualPort, probe.httpGet.path, `10.1.2.3:${port}`);
            return status >= 200 && status < 400;
          }
          // The image's MCPN_HEALTH_URL must name the port the args listen on; here, the real one.
          const healthUrl = new URL(env.MCPN_HEALTH_URL ?? imageEnv("MCPN_HEALTH_URL")!);
          expect(Number(healthUrl.port)).toBe(port);
          healthUrl.port = String(actualPort);
          return (await execProbe(probe.exec!.command, { ...env, MCPN_HEALTH_URL: healthUrl.href })) === 0;
        };
        for (const [name, probe] of probesOf(container)) expect(await run(probe), `${name} while running`).toBe(true);
        child.kill("SIGTERM");
        expect(await exited).toBe(0);
        for (const [name, probe] of probesOf(container)) expect(await run(probe), `${name} once stopped`).toBe(false);
      } finally {
        child.kill("SIGKILL");
      }
    },
  );
});
