# mcp-normalizer as a sidecar (docs/kubernetes.md).
#   docker build -t mcp-normalizer .
# Config by a mounted file (listen 0.0.0.0 needs auth.bearerTokens in it):
#   docker run -v $PWD/sidecar.json:/config/proxy.config.json:ro -e MCPN_TOKEN=… -p 8808:8808 mcp-normalizer
# Or by flags, for hosts that share the network namespace (same pod: loopback, no auth needed):
#   docker run mcp-normalizer serve --name api --url http://127.0.0.1:9000/mcp --port 8808

# Build stage: tsc is a devDependency, so dist/ is compiled here and only dist/ is copied on.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
# A folder the image's user may write, for the normalization log of config/examples/sidecar.json
# (log.file). Mount a volume there to keep the records past the container, and with a read-only
# root filesystem.
RUN mkdir -p /var/log/mcp-normalizer && chown 1000:1000 /var/log/mcp-normalizer
# The image's own unprivileged user `node`, by number: Kubernetes' runAsNonRoot refuses a user
# name, which it cannot check without the image's /etc/passwd.
USER 1000:1000
EXPOSE 8808
# node:20-slim has no curl: the probe is Node's own fetch. Change the URL with the port.
ENV MCPN_HEALTH_URL=http://127.0.0.1:8808/healthz
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 CMD ["node", "-e", "fetch(process.env.MCPN_HEALTH_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli.js"]
CMD ["serve", "--config", "/config/proxy.config.json"]
