#!/usr/bin/env bash
# Debian packages the tests use: DejaVu for the wiring picture (the screens'
# fonts ship with the referee), tmux for the emulator test, systemd-analyze
# for the unit check, mosquitto (the MQTT broker) and chromium with its
# chromedriver (headless, the live standings page, driven by selenium) for the
# club-night tests, shellcheck for the shell
# scripts, strace for the injected faults, node for EGN's rules engine, openssl
# for the broker's TLS test (tests/support/system_tools.py names each program's
# package).  Installs what is missing
# when run as root with apt-get; otherwise says what to install (the tests
# that need a missing package skip and say why).
set -u
packages=(fonts-dejavu-core tmux systemd mosquitto chromium chromium-driver shellcheck strace nodejs openssl)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
    echo "note: some tests will skip; to run them: sudo apt-get install ${missing[*]}" >&2
fi
exit 0
