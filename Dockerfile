# syntax=docker/dockerfile:1
# Leaf ID service. Build: docker build -t leaf-nest .   (or: docker compose up --build)

# ---- build: full image has python3/make/g++ for the native modules
#      (zookeeper, better-sqlite3) that compile during npm ci.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev

# ---- runtime: same Debian release (glibc/libstdc++) as the build stage.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    LEAF_STATE_DIR=/app/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 8080
CMD ["node", "dist/src/main.js"]
