# syntax=docker/dockerfile:1
# Leaf ID service. Build: docker build -t leaf-nest .   (or: docker compose up --build)

# ---- build: full image has python3/make/g++ for the native modules
#      (zookeeper, better-sqlite3) that compile during npm ci.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The library is an npm workspace (node_modules/nestjs-leaf -> libs/leaf): npm ci needs its manifest.
COPY libs/leaf/package.json libs/leaf/
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
# The app requires the built package through the workspace link node_modules/nestjs-leaf.
COPY --from=build --chown=node:node /app/libs/leaf/package.json ./libs/leaf/package.json
COPY --from=build --chown=node:node /app/libs/leaf/dist ./libs/leaf/dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 8080
CMD ["node", "dist/src/main.js"]
