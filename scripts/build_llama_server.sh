#!/usr/bin/env bash
# Build llama.cpp's llama-server (CPU only, static, no web UI) from the llama.cpp tree that
# PyPI's llama-cpp-python sdist vendors. Idempotent: skips when the cached binary exists.
#
#   scripts/build_llama_server.sh            # prints the binary path on its last line
#
# Cache: ${SERVECAP_CACHE:-~/.cache/servecap}/llama-server/<version>/bin/llama-server
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
CACHE_ROOT="${SERVECAP_CACHE:-${HOME}/.cache/servecap}"
DEST="${CACHE_ROOT}/llama-server/${VERSION}"
BIN="${DEST}/bin/llama-server"
JOBS="${BUILD_JOBS:-$(nproc)}"

if [[ -x "${BIN}" ]]; then
    echo "${BIN}"
    exit 0
fi

mkdir -p "${DEST}"
WORK="$(mktemp -d "${DEST}/build.XXXXXX")"
trap 'rm -rf "${WORK}"' EXIT

echo "downloading llama-cpp-python==${VERSION} sdist" >&2
python -m pip download --quiet --no-deps --no-binary :all: \
    "llama-cpp-python==${VERSION}" -d "${WORK}/dl" >&2
tar -xzf "${WORK}"/dl/llama_cpp_python-*.tar.gz -C "${WORK}"
SRC="$(echo "${WORK}"/llama_cpp_python-*/vendor/llama.cpp)"
[[ -f "${SRC}/CMakeLists.txt" ]] || { echo "no vendored llama.cpp in sdist" >&2; exit 1; }

GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
start=$(date +%s)
cmake -S "${SRC}" -B "${WORK}/build" "${GEN[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >&2
cmake --build "${WORK}/build" --target llama-server -j "${JOBS}" >&2
echo "build took $(( $(date +%s) - start )) s" >&2

mkdir -p "${DEST}/bin"
install -m 0755 "${WORK}/build/bin/llama-server" "${BIN}.tmp"
mv "${BIN}.tmp" "${BIN}"   # atomic: a half-copied binary never looks cached
echo "${BIN}"
