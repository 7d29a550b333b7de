# Wisp: API, console, captive portals and RADIUS in one image; `wisp worker` from the same image.
#   docker build -t wisp .
#   docker run -d -p 8080:8080 -p 1812-1813:1812-1813/udp -v wisp-data:/data wisp
# test/deploy/dockerfile.test.ts runs this file's COPY, RUN and CMD lines on a clean copy of the
# repository (containers cannot be built on the machine the tests run on).

# --- build: install everything, bundle, then keep the production dependencies only -------------
FROM node:22-bookworm-slim AS build
# better-sqlite3 downloads a prebuilt binary when one exists for this platform and compiles
# itself otherwise: the compiler is the fallback (this stage only). `npm run build` compiles Wisp's
# EAP TLS addon with it (scripts/native.mjs); the run stage takes it inside dist/.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY scripts ./scripts
COPY bin ./bin
COPY src ./src
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

# --- run: the bundle, its external packages, no sources, no compiler, not root -----------------
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/scripts/dist.mjs ./scripts/dist.mjs
# The data folder (SQLite database, secret.key) belongs to the image's unprivileged user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 1812/udp 1813/udp
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The CLI in a running container: docker exec <container> node bin/wisp.mjs <command>
CMD ["node", "dist/main.js"]
