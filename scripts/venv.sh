# shellcheck shell=bash
# Sourced by ./referee and ./test: makes .venv (Python 3.11+) on first use and
# reinstalls the project into it whenever pyproject.toml changes.
# EXTRAS picks the optional dependencies (default: test).  It says one line
# while it works; pip's output goes to .venv/install.log, shown if it fails.
#
# A Python that cannot make a venv with pip (Debian and Ubuntu leave venv's
# ensurepip out until python3-venv is installed) is found before .venv is
# made, and the package to install named in one line.  A half-made .venv (no
# pip in it, or one made here whose first install never finished) is made
# again rather than failing on every later run.
venv_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv_dir="$venv_root/.venv"
extras=${EXTRAS:-test}
venv_made="$venv_dir/.made-by-venv.sh"
install_log="$venv_dir/install.log"

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

# venv_problem PYTHON: says in one line what PYTHON lacks to make a venv with
# pip, and returns 1; returns 0 when it has venv and ensurepip.
venv_problem() {
    local version
    "$1" -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
    version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if command -v apt-get >/dev/null 2>&1; then
        echo "euchre-referee: $1 (Python $version) cannot make a venv with pip (no ensurepip):" \
            "sudo apt install python$version-venv (python3-venv for Debian's own python3)," \
            "then start again" >&2
    else
        echo "euchre-referee: $1 (Python $version) cannot make a venv with pip (no ensurepip):" \
            "install its venv and ensurepip modules, then start again" >&2
    fi
    return 1
}

# half_made: true when .venv is there but cannot be used or finished: no
# python, no pip, or made here and no install of it ever finished.
half_made() {
    [ -e "$venv_dir" ] || return 1
    [ -x "$venv_dir/bin/python" ] || return 0
    "$venv_dir/bin/python" -c 'import pip' >/dev/null 2>&1 || return 0
    if [ -f "$venv_made" ] && ! compgen -G "$venv_dir/.installed-*" >/dev/null; then
        return 0
    fi
    return 1
}

stamp="$venv_dir/.installed-$extras"
wanted=$(cksum <"$venv_root/pyproject.toml")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
    if half_made; then
        echo "euchre-referee: $venv_dir is half made (no pip, or its first install did" \
            "not finish): making it again" >&2
        rm -rf "$venv_dir"
    fi
    if [ ! -e "$venv_dir" ]; then
        python=$(find_python) || exit 1
        venv_problem "$python" || exit 1
        echo "making .venv with $python and installing euchre-referee[$extras] into it" \
            "(once; pip's log: .venv/install.log) ..." >&2
        # --system-site-packages lets a Pi use Debian's python3-lgpio.
        made=$("$python" -m venv --system-site-packages "$venv_dir" 2>&1) || {
            echo "euchre-referee: $python -m venv failed: $made" >&2
            exit 1
        }
        : >"$venv_made"
    else
        echo "installing euchre-referee[$extras] into .venv" \
            "(pip's log: .venv/install.log) ..." >&2
    fi
    if ! {
        "$venv_dir/bin/python" -m pip install --upgrade pip &&
            "$venv_dir/bin/python" -m pip install -e "${venv_root}[$extras]"
    } >"$install_log" 2>&1; then
        echo "euchre-referee: installing into .venv failed; the end of $install_log:" >&2
        tail -n 25 "$install_log" >&2
        exit 1
    fi
    echo "$wanted" >"$stamp"
fi
