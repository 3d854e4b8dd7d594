#!/usr/bin/env bash
# Installs the Python packages some tests drive our servers with: the official MCP Python SDK
# (`mcp`, used by crates/tb-mcp/tests/it/python_sdk.rs). It goes into a virtual environment under
# target/ so nothing touches the system Python. Prints the interpreter path on the last line.
#
#   scripts/ci-python-deps.sh            # creates/updates target/py-venv
#   TB_PY_VENV=/some/dir scripts/ci-python-deps.sh
#
# The tests look for the interpreter in $TB_PYTHON, then target/py-venv/bin/python, then python3
# (tb_test_support::Need).
set -euo pipefail
cd "$(dirname "$0")/.."

# mcp 1.30.0: the last 1.x release (the 2.x line changed the client API); needs Python >= 3.10.
MCP_VERSION="1.30.0"
VENV="${TB_PY_VENV:-target/py-venv}"
PYTHON="${PYTHON:-python3}"

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "ci-python-deps: $PYTHON is older than 3.10; the mcp SDK needs 3.10 or newer" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('mcp') == '$MCP_VERSION' else 1)" 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
fi
"$VENV/bin/python" -c 'import mcp.client.streamable_http, mcp.client.session'
echo "$(cd "$VENV" && pwd)/bin/python"

# >>> tb-openenv: the PyPI OpenEnv client (crates/tb-openenv/tests/it/python_client.rs) >>>
# `openenv` 0.4.1 (the version the ThinkingBox OpenEnv adapter locks; its GenericEnvClient speaks
# `/ws`) goes into its own venv: it pulls fastmcp and gradio, whose own `mcp` requirement must not
# move the MCP SDK pin above. The test looks for $TB_OPENENV_PYTHON, then
# target/py-openenv/bin/python. Its path goes to stderr so the last stdout line stays the MCP one.
OPENENV_VERSION="0.4.1"
OPENENV_VENV="${TB_OPENENV_VENV:-target/py-openenv}"
if [ ! -x "$OPENENV_VENV/bin/python" ]; then
  "$PYTHON" -m venv "$OPENENV_VENV"
fi
if ! "$OPENENV_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('openenv') == '$OPENENV_VERSION' else 1)" 2>/dev/null; then
  "$OPENENV_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "openenv==$OPENENV_VERSION"
fi
"$OPENENV_VENV/bin/python" -c 'from openenv.core import GenericEnvClient'
echo "ci-python-deps: OpenEnv client python: $(cd "$OPENENV_VENV" && pwd)/bin/python" >&2
# <<< tb-openenv <<<

# The reference's own checkouts (microsoft/thinkingbox, microsoft/thinkingbox-data with its
# servers), where the tests look for them (crates/tb-test-support): the two venvs below serve
# tests on the reference's code only, so they are made only when the checkouts are there.
REFERENCE_CACHE="${HOME:-/nonexistent}/.cache/thinkingbox-rs/reference"
FRAMEWORK="${THINKINGBOX_FRAMEWORK:-$REFERENCE_CACHE/thinkingbox}"
REFERENCE_DATA="${THINKINGBOX_REFERENCE_DATA:-$REFERENCE_CACHE/thinkingbox-data}"

# >>> reference records: the framework's own record model and `tb agg` (crates/tb-cli/tests/it/reference_records.rs) >>>
if [ -f "$FRAMEWORK/thinkingbox/common/chat_types.py" ]; then
# The framework is not installed: the test puts the framework checkout on PYTHONPATH. This venv
# holds only what `thinkingbox.common.chat_types` and `thinkingbox.cli.agg_main` import
# (pydantic, numpy, scipy, click, rich, PyYAML, httpx, and azure-identity, which the package's
# `__init__` pulls in), at the versions of the reference's recorded environment
# (../shared/tb-bench-v1/reference-python-requirements.txt, used as pip constraints). The test
# looks for $TB_REFERENCE_PYTHON, then target/py-reference/bin/python.
REF_VENV="${TB_REFERENCE_VENV:-target/py-reference}"
REF_PINS="${TB_SHARED:-../shared}/tb-bench-v1/reference-python-requirements.txt"
if [ ! -f "$REF_PINS" ]; then
  echo "ci-python-deps: $REF_PINS not found (the reference's pinned requirements)" >&2
  exit 1
fi
if [ ! -x "$REF_VENV/bin/python" ]; then
  "$PYTHON" -m venv "$REF_VENV"
fi
if ! "$REF_VENV/bin/python" -c 'import pydantic, numpy, scipy, click, rich, yaml, httpx, azure.identity' 2>/dev/null; then
  "$REF_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -c "$REF_PINS" \
    pydantic numpy scipy click rich pyyaml httpx azure-identity
fi
echo "ci-python-deps: reference record python: $(cd "$REF_VENV" && pwd)/bin/python" >&2
else
  echo "ci-python-deps: no framework checkout at $FRAMEWORK: the reference-records venv is not made" >&2
fi
# <<< reference records <<<

# >>> campaigns: the Kubernetes Job schema (crates/tb-cli/tests/it/campaign_plan.rs) >>>
# `kubectl apply --dry-run=client` needs an API server to fetch the OpenAPI document from, so
# the generated manifests are validated with kubernetes-validate, which ships JSON schemas
# generated from the official Kubernetes OpenAPI definitions. The test looks for
# $TB_K8S_PYTHON, then target/py-k8s/bin/python.
K8S_VALIDATE_VERSION="1.37.0"
K8S_VENV="${TB_K8S_VENV:-target/py-k8s}"
if [ ! -x "$K8S_VENV/bin/python" ]; then
  "$PYTHON" -m venv "$K8S_VENV"
fi
if ! "$K8S_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('kubernetes-validate') == '$K8S_VALIDATE_VERSION' else 1)" 2>/dev/null; then
  "$K8S_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "kubernetes-validate==$K8S_VALIDATE_VERSION"
fi
echo "ci-python-deps: Kubernetes schema python: $(cd "$K8S_VENV" && pwd)/bin/python" >&2
# <<< campaigns <<<
# >>> tb-external: the reference's v1 tool servers (crates/tb-cli/tests/it/external_servers.rs) >>>
if [ -d "$REFERENCE_DATA/servers/tb_business_ops_servers_202606" ]; then
# The dependencies of thinkingbox-data/servers/tb_business_ops_servers_202606 (fastmcp, pydantic,
# odata-query, typesense) and of servers/thinkingbox_tools (email-validator, python-dateutil; for
# crates/tb-domains/tests/it/tool_arg_errors.rs), pinned to the versions of the reference's own venv
# (tb-bench-v1/reference-python-requirements.txt), go into their own venv. The package itself is
# not installed (pip would copy it without its JSON data): the test puts the data checkout's
# servers folder on PYTHONPATH. About 60 s on the 2-core VM. The test looks for
# $TB_SERVERS_PYTHON, then target/py-tbservers/bin/python. Its path goes to stderr.
SERVERS_VENV="${TB_SERVERS_VENV:-target/py-tbservers}"
if [ ! -x "$SERVERS_VENV/bin/python" ]; then
  "$PYTHON" -m venv "$SERVERS_VENV"
fi
if ! "$SERVERS_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('fastmcp') == '3.4.11' and m.version('mcp') == '1.30.0' and m.version('email-validator') == '2.4.0' else 1)" 2>/dev/null; then
  "$SERVERS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "fastmcp==3.4.11" "fastmcp-slim==3.4.11" "mcp==1.30.0" "pydantic==2.14.4" \
    "odata-query==0.10.0" "typesense==2.1.1" "email-validator==2.4.0" "python-dateutil==2.9.0.post0"
fi
"$SERVERS_VENV/bin/python" -c 'import fastmcp, odata_query, typesense, pydantic, email_validator, dateutil'
echo "ci-python-deps: v1 tool servers python: $(cd "$SERVERS_VENV" && pwd)/bin/python" >&2
else
  echo "ci-python-deps: no servers' sources at $REFERENCE_DATA: the v1 servers venv is not made" >&2
fi
# <<< tb-external <<<

# Whether a test marked #[needs(python...)] is ignored is decided when the tests are built
# (crates/tb-test-macros/build.rs): make the next build decide again, now that the venvs are here.
touch crates/tb-test-support/src/lookup.rs
