# tsserve's container image (docs/deploy.md). Build from the repo root:
#   docker build -t tsserve:0.1.0 .
# Network only for the registries: the npm registry (npm ci, through the repo's .npmrc, which
# skips onnxruntime-node's CUDA download) and the base image's. The demo models are generated
# at build time from fixed seeds; nothing is downloaded at run time.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc tsconfig.json ./
COPY bin ./bin
COPY schema ./schema
COPY frontend ./frontend
COPY backend ./backend
COPY tools ./tools
COPY examples ./examples
# npm ci runs `prepare` (npm run build), so the sources are copied first.
RUN npm ci --no-audit --no-fund \
 && node bin/tsserve.js models generate /app/model-store \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json /app/.npmrc ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/model-store ./model-store
# Read at run time: the JSON Schema of metrics.yaml, the default metrics.yaml (also the
# self-metrics' declarations, its tsserve_metrics: section) and the vLLM profile's
# (--metrics-profile vllm).
COPY --from=build /app/schema/metrics.schema.json ./schema/
COPY metrics.yaml metrics-vllm.yaml ./
# Owned by root, run as `node` (uid 1000, the base image's user): the server cannot change its
# own code or models; it writes only to its log dir.
RUN mkdir -p /var/log/tsserve && chown node:node /var/log/tsserve
USER node
# inference, management (loopback unless you give an address; then token auth is forced), metrics
EXPOSE 8080 8081 8082
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/ping').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop, Kubernetes) drains; give it more than --shutdown-timeout:
# docker stop -t 35.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/tsserve.js"]
CMD ["start", "--model-store=/app/model-store", "--inference-address=http://0.0.0.0:8080", "--metrics-address=http://0.0.0.0:8082", "--log-dir=/var/log/tsserve", "--shutdown-timeout=25"]
