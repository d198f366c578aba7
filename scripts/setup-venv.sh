#!/usr/bin/env bash
# The project's Python environment: a venv with scalewise installed editable, with its test tools.
set -euo pipefail
venv=$1
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
