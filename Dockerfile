# syntax=docker/dockerfile:1
# Leaf ID service.
#   docker build -t leaf-nest .
#   docker run --rm -e LEAF_DB_URL=mysql://leaf_migrator:...@db:3306/leaf leaf-nest node dist/src/database/migrate.js
#     (or the TypeORM CLI on the same set: ... leaf-nest node node_modules/typeorm/cli.js migration:show -d dist/migrations/data-source.js)
#   docker run -p 8080:8080 -e LEAF_DB_URL=... -e LEAF_ZK_ADDRESS=... -e LEAF_SNOWFLAKE_ADVERTISE=host:8080 \
#              -v leaf-state:/var/lib/leaf leaf-nest
# Both stages use the same Node LTS line (24, the one CI tests on) on the same, current Debian
# release (13 "trixie"; glibc, libstdc++): the native addons built or fetched in the build
# stage (zookeeper, better-sqlite3, fs-native-extensions) are copied as they are. Not Alpine:
# those addons expect glibc.
# Tested without a container engine (docs/operations.md, "Deployment"):
#  - test/deploy.e2e-spec.ts (npm test) checks this file and the manifests statically;
#  - test/docker-image.image-spec.ts (npm run test:image) reads this file's instructions and
#    replays them: the build stage's COPY list and RUN lines (npm run build, npm prune
#    literally; npm ci by the checkout's node_modules), the runtime stage's COPY --from list,
#    volume directory and USER; then runs the deploy/k8s Job's command, CMD and HEALTHCHECK as
#    uid 1000 in a read-only chroot of that tree (volumes at /var/lib/leaf and /tmp) against
#    MariaDB and ZooKeeper, and stops the service with STOPSIGNAL. A wrong path in CMD,
#    HEALTHCHECK or the Job, or a file missing from a COPY list, fails it. A RUN it does not
#    know fails it too: teach test/support/image.ts what a new one does.

# ---- build: compilers for the addons that node-gyp builds during npm ci (zookeeper, and
#      better-sqlite3 when no prebuilt binary matches).
FROM node:24-trixie-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The library is an npm workspace (node_modules/nestjs-leaf -> libs/leaf): npm ci needs its manifest.
COPY libs/leaf/package.json libs/leaf/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY libs/leaf ./libs/leaf
COPY src ./src
COPY migrations ./migrations
# Library then application (dist/src/main.js, dist/src/database/migrate.js, and the
# migrations with the TypeORM CLI's data source in dist/migrations/); then drop the dev
# dependencies so the runtime copies production modules only.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: no compilers, no npm install, production dependencies only.
FROM node:24-trixie-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    LEAF_STATE_DIR=/var/lib/leaf
WORKDIR /app
# Code and modules stay owned by root: the service user can read them, not change them.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The app requires the built package through the workspace link node_modules/nestjs-leaf.
COPY --from=build /app/libs/leaf/package.json ./libs/leaf/package.json
COPY --from=build /app/libs/leaf/dist ./libs/leaf/dist
# The only writable place: the snowflake state (worker-ID cache, time lease, its lock).
RUN mkdir -p /var/lib/leaf && chown 1000:1000 /var/lib/leaf
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
VOLUME ["/var/lib/leaf"]
EXPOSE 8080
# Ready = able to issue IDs now (terminus). No curl in slim images: Node's own http client.
# The start period covers the snowflake start-up wait (LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS, 90 s).
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "require('node:http').get({host:'127.0.0.1',port:process.env.PORT||8080,path:'/health/ready',timeout:4000},(r)=>process.exit(r.statusCode===200?0:1)).on('timeout',()=>process.exit(1)).on('error',()=>process.exit(1))"]
# SIGTERM: Nest's shutdown hooks stop issuing, record the last snowflake millisecond, close
# ZooKeeper and the database (src/bootstrap.ts, enableShutdownHooks).
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
