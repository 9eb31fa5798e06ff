#!/usr/bin/env bash
# Create bench/.venv-peer (if missing) and install the peer tool Drishti 0.8 into it from PyPI.
# Drishti gets its own virtualenv so its dependencies never touch the project's.
#
#   bash bench/setup_peer.sh            # uses python3 from PATH
#   PYTHON=python3.11 bash bench/setup_peer.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-peer"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    echo "creating $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
fi

"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "drishti-io==0.8"

# drishti has no --version flag; ask the installer what it installed.
"$venv/bin/python" -m pip show drishti-io | grep -E '^(Name|Version):'
if [[ ! -x "$venv/bin/drishti" ]]; then
    echo "error: $venv/bin/drishti was not installed" >&2
    exit 1
fi
echo "peer ready: $venv/bin/drishti"
