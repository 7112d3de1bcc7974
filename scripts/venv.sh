# shellcheck shell=bash
# Sourced by ./referee and ./test: makes .venv (Python 3.11+) on first use and
# reinstalls the project into it whenever pyproject.toml changes.
# EXTRAS picks the optional dependencies (default: test).
venv_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv_dir="$venv_root/.venv"
extras=${EXTRAS:-test}

find_python() {
    for candidate in python3 python3.13 python3.12 python3.11; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "euchre-referee needs Python 3.11 or newer (python3 --version says:" \
        "$(python3 --version 2>&1))" >&2
    return 1
}

if [ ! -x "$venv_dir/bin/python" ]; then
    python=$(find_python) || exit 1
    echo "making $venv_dir with $python ..." >&2
    # --system-site-packages lets a Pi use Debian's python3-lgpio.
    "$python" -m venv --system-site-packages "$venv_dir" || exit 1
fi
stamp="$venv_dir/.installed-$extras"
wanted=$(cksum <"$venv_root/pyproject.toml")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
    echo "installing euchre-referee[$extras] into .venv ..." >&2
    "$venv_dir/bin/python" -m pip install --quiet --upgrade pip >&2 || exit 1
    "$venv_dir/bin/python" -m pip install --quiet -e "${venv_root}[$extras]" >&2 || exit 1
    echo "$wanted" > "$stamp"
fi
