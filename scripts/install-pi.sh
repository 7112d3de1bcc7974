#!/usr/bin/env bash
# Installs the Euchre table referee on Raspberry Pi OS bookworm (Python 3.11) or
# trixie (Python 3.13, what Raspberry Pi Imager writes now; the system is read
# from /etc/os-release) and starts it at boot under systemd.  Run it from a
# checkout of this repository:
#
#     sudo scripts/install-pi.sh            # install or update
#     scripts/install-pi.sh --dry-run       # only say what it would change
#
# It is idempotent: a second run changes nothing and says "0 changes".
#
# What it does (each step checks first and changes only what differs):
#   1. /boot/firmware/config.txt (or /boot/config.txt), in its [all] section:
#      dtparam=spi=on (an SPI panel, the recommended 2.42" SSD1309: /dev/spidev0.0),
#      dtparam=i2c_arm=on, dtparam=i2c_arm_baudrate=400000 (an I2C panel at
#      400 kHz) and dtoverlay=dwc2 (USB gadget mode); other lines are left alone.
#   2. /etc/modules-load.d/euchre-referee.conf: i2c-dev, dwc2, g_serial
#      (/dev/i2c-1 and the USB gadget serial port /dev/ttyGS0 at boot).  The
#      USB port takes one gadget: where trixie's rpi-usb-gadget has turned on
#      its USB Ethernet gadget (g_ether, Imager's "USB Gadget mode"), the serial
#      gadget is left out, as with --no-gadget, and the script says how to
#      have it instead (sudo rpi-usb-gadget off, then run this again).
#   3. Masks serial-getty@ttyGS0.service: the referee owns /dev/ttyGS0, no
#      login prompt may sit on it (other serial consoles are left as they are).
#   4. apt: python3-lgpio python3-rpi-lgpio python3-spidev python3-venv
#      i2c-tools (only the missing ones, and only those apt has: python3-lgpio
#      comes from Raspberry Pi's repository, on bookworm and trixie; on plain
#      Debian, which has no python3-lgpio, the rest is still installed and the
#      lgpio wheel is pip-installed into the venv in step 6: lgpio's own up to
#      Python 3.12, adafruit-lgpio, the same module built for 3.13, on trixie;
#      the screens' fonts ship with the program).  python3-rpi-lgpio is the
#      RPi.GPIO API over lgpio, through which luma drives an SPI panel's DC and
#      RES pins: RPi.GPIO itself (python3-rpi.gpio) does not run on a Pi 5, and
#      the two are the same module, so an installed python3-rpi.gpio is
#      replaced in the same apt-get run.  Where apt has no python3-rpi-lgpio,
#      rpi-lgpio is pip-installed into the venv in step 6 (over the lgpio the
#      venv has).  python3-spidev is luma's /dev/spidev0.0.
#   5. The system user "euchre" (no login, no home) in the groups gpio, i2c,
#      spi and dialout (groups made if missing).
#   6. A venv with --system-site-packages (for Debian's python3-lgpio) in
#      /opt/euchre-referee/.venv, and the project pip-installed into it (again
#      only when the source changed).
#   7. /etc/euchre-referee/referee.toml from hw/referee.toml, never over an
#      edited one (the shipped default is kept beside it as referee.toml.default).
#   8. /etc/systemd/system/euchre-referee.service from systemd/, enabled
#      (multi-user.target.wants), then (re)started when anything it runs changed.
#      The unit keeps the box off every network; when the config names a club
#      night's broker ([club] broker), the drop-in
#      euchre-referee.service.d/club.conf lets it reach that broker and nothing
#      else (firmware/pi/network.py, docs/club.md); without one it is removed.
#      Run this again after changing [club].
#
# Options:
#   --dry-run, -n   print what would change; change nothing
#   --no-gadget     leave out the USB gadget serial (dwc2, g_serial): for a Pi
#                   wired to the UART, or with no USB OTG port
#   --help
#
# Environment:
#   PYTHON=FILE     the Python that reads [club] broker (python3; 3.11 or newer)
#   ROOT=DIR        a fake root for tests: every file edit goes under DIR
#                   ($ROOT/boot/firmware/config.txt, $ROOT/etc/...), and the steps
#                   that act on the running system (apt-get, useradd, the venv,
#                   pip, systemctl) are skipped and said so.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

DRY_RUN=0
GADGET=1
for arg in "$@"; do
    case "$arg" in
        --dry-run | -n) DRY_RUN=1 ;;
        --no-gadget) GADGET=0 ;;
        --help | -h)
            usage
            exit 0
            ;;
        *)
            echo "install-pi: unknown option $arg (try --help)" >&2
            exit 2
            ;;
    esac
done

ROOT=${ROOT:-}
ROOT=${ROOT%/}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=/opt/euchre-referee
VENV=$PREFIX/.venv
CONF_DIR=/etc/euchre-referee
STATE_DIR=/var/lib/euchre-referee
UNIT=euchre-referee.service
UNIT_DIR=/etc/systemd/system
SERVICE_USER=euchre
SERVICE_GROUPS=(gpio i2c spi dialout)
APT_PACKAGES=(python3-lgpio python3-rpi-lgpio python3-spidev python3-venv i2c-tools)
# RPi.GPIO itself: the same module as python3-rpi-lgpio's, which replaces it.
RPI_GPIO_PACKAGE=python3-rpi.gpio
# rpi-usb-gadget's switch (trixie): present while its USB Ethernet gadget is on.
USB_GADGET_CONF=/usr/lib/modules-load.d/usb-gadget.conf

changes=0
reboot_needed=0
restart_needed=0
lgpio_from_pip=0
rpi_lgpio_from_pip=0

say() { printf '%s\n' "$*"; }

# change DESCRIPTION: count one change, and say it (as "would:" in a dry run).
# Returns 1 in a dry run, so callers write: change "..." && do_it
change() {
    changes=$((changes + 1))
    if [ "$DRY_RUN" -eq 1 ]; then
        say "would: $*"
        return 1
    fi
    say "changed: $*"
    return 0
}

ok() { say "ok: $*"; }

# on_system: true when acting on the running system (no ROOT given).
on_system() { [ -z "$ROOT" ]; }

skip_fake_root() { say "skipped (ROOT=$ROOT): $*"; }

# write_file DEST MODE SOURCE_FILE DESCRIPTION: DEST (under ROOT) gets SOURCE's
# bytes and MODE, atomically, unless it already has both.  Returns 0 when it
# changed (or would change) the file.
# MODE "-" leaves the mode alone (the FAT boot partition has no modes to set).
write_file() {
    local dest="$ROOT$1" mode=$2 source=$3 what=$4 tmp
    if [ -f "$dest" ] && [ ! -L "$dest" ] && cmp -s "$source" "$dest" &&
        { [ "$mode" = - ] || [ "$(stat -c %a "$dest")" = "$mode" ]; }; then
        ok "$what ($1)"
        return 1
    fi
    change "$what ($1)" || return 0
    mkdir -p "$(dirname "$dest")"
    tmp=$(mktemp "$dest.XXXXXX")
    cat "$source" >"$tmp"
    if [ "$mode" != - ]; then
        chmod "$mode" "$tmp"
    fi
    sync "$tmp" 2>/dev/null || true
    mv -f "$tmp" "$dest"
    return 0
}

# symlink LINK TARGET DESCRIPTION: LINK (under ROOT) points at TARGET.
symlink() {
    local link="$ROOT$1" target=$2 what=$3
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$target" ]; then
        ok "$what"
        return 1
    fi
    change "$what ($1 -> $target)" || return 0
    mkdir -p "$(dirname "$link")"
    rm -f "$link"
    ln -s "$target" "$link"
    return 0
}

# --- the system -----------------------------------------------------------------

# os_release KEY: KEY's value in /etc/os-release (under ROOT when given), or "".
os_release() {
    local file=$ROOT/etc/os-release key value
    [ -f "$file" ] || return 0
    while IFS='=' read -r key value; do
        if [ "$key" = "$1" ]; then
            value=${value#[\"\']}
            printf '%s\n' "${value%[\"\']}"
            return 0
        fi
    done <"$file"
}

# the_system: says which system this is; warns off one that is not bookworm or
# trixie; leaves the USB serial gadget out where rpi-usb-gadget holds the port.
the_system() {
    local codename name
    codename=$(os_release VERSION_CODENAME)
    name=$(os_release PRETTY_NAME)
    say "system: ${name:-unknown (no /etc/os-release)}"
    case "$codename" in
        bookworm | trixie) ;;
        *)
            say "warning: made for Raspberry Pi OS bookworm and trixie, not" \
                "'${codename:-unknown}': going on, check what it says" >&2
            ;;
    esac
    if [ "$GADGET" -eq 1 ] && [ -f "$ROOT$USB_GADGET_CONF" ] &&
        grep -qx '[[:space:]]*g_ether[[:space:]]*' "$ROOT$USB_GADGET_CONF"; then
        say "note: rpi-usb-gadget's USB Ethernet gadget is on ($USB_GADGET_CONF):" \
            "the USB port takes one gadget, so the serial link's (g_serial) is left out;" \
            "to have the serial link on USB: sudo rpi-usb-gadget off, then run this again"
        GADGET=0
    fi
}

# --- 1. the boot config: SPI, I2C at 400 kHz, USB gadget mode ----------------

# edit_config_txt FILE OVERLAY: prints FILE with the dtparams set.  Lines in the
# unconditional part ([all], or before any section) that set spi, i2c_arm or
# i2c_arm_baudrate get our values; whatever is missing is appended under [all].
# Conditional sections ([pi4], [cm5] ...) are left alone.
edit_config_txt() {
    awk -v overlay="$2" '
        BEGIN {
            n = 3
            key[1] = "spi"; val[1] = "on"
            key[2] = "i2c_arm"; val[2] = "on"
            key[3] = "i2c_arm_baudrate"; val[3] = "400000"
            section = ""; last = ""
        }
        function unconditional() { return section == "" || section == "all" }
        /^[ \t]*\[[^]]*\][ \t]*$/ {
            section = $0
            gsub(/^[ \t]*\[|\][ \t]*$/, "", section)
            last = section
            print
            next
        }
        unconditional() && /^[ \t]*dtparam=/ {
            body = $0
            sub(/^[ \t]*dtparam=/, "", body)
            m = split(body, parts, ",")
            hit = 0
            out = ""
            for (j = 1; j <= m; j++) {
                p = parts[j]
                split(p, kv, "=")
                for (i = 1; i <= n; i++) {
                    if (kv[1] == key[i]) { p = key[i] "=" val[i]; found[i] = 1; hit = 1 }
                }
                out = out (j > 1 ? "," : "") p
            }
            print (hit ? "dtparam=" out : $0)
            next
        }
        unconditional() && overlay != "" && $0 ~ ("^[ \t]*dtoverlay=" overlay "([ \t]*$|,)") {
            overlay_found = 1
        }
        { print }
        END {
            missing = ""
            for (i = 1; i <= n; i++) {
                if (!found[i]) missing = missing "dtparam=" key[i] "=" val[i] "\n"
            }
            if (overlay != "" && !overlay_found) missing = missing "dtoverlay=" overlay "\n"
            if (missing != "") {
                if (last != "" && last != "all") print "[all]"
                printf "# euchre-referee (scripts/install-pi.sh): the OLED on SPI, or on I2C at 400 kHz"
                printf "%s\n", (overlay != "" ? ", USB gadget serial" : "")
                printf "%s", missing
            }
        }
    ' "$1"
}

boot_config() {
    local file="" candidate new overlay=""
    for candidate in /boot/firmware/config.txt /boot/config.txt; do
        if [ -f "$ROOT$candidate" ]; then
            file=$candidate
            break
        fi
    done
    if [ -z "$file" ]; then
        say "warning: no /boot/firmware/config.txt or /boot/config.txt under '${ROOT:-/}':" \
            "not Raspberry Pi OS? SPI, I2C and the USB gadget are left as they are" >&2
        return 0
    fi
    [ "$GADGET" -eq 1 ] && overlay=dwc2
    new=$(mktemp)
    edit_config_txt "$ROOT$file" "$overlay" >"$new"
    if write_file "$file" - "$new" \
        "boot config: SPI on, I2C on at 400 kHz${overlay:+, dtoverlay=dwc2}"; then
        reboot_needed=1
    fi
    rm -f "$new"
}

# --- 2. kernel modules at boot ------------------------------------------------

modules() {
    local new
    new=$(mktemp)
    {
        echo "# Loaded at boot for the Euchre table referee (scripts/install-pi.sh)."
        echo "# /dev/i2c-1 for the OLED:"
        echo "i2c-dev"
        if [ "$GADGET" -eq 1 ]; then
            echo "# USB gadget serial /dev/ttyGS0 (the referee's serial link):"
            echo "dwc2"
            echo "g_serial"
        fi
    } >"$new"
    if write_file /etc/modules-load.d/euchre-referee.conf 644 "$new" "kernel modules at boot"; then
        reboot_needed=1
    fi
    rm -f "$new"
}

# --- 3. no login prompt on the referee's serial port --------------------------

getty() {
    [ "$GADGET" -eq 1 ] || return 0
    local wants=$UNIT_DIR/getty.target.wants/serial-getty@ttyGS0.service
    if [ -e "$ROOT$wants" ] || [ -L "$ROOT$wants" ]; then
        if change "disable serial-getty@ttyGS0.service ($wants)"; then
            rm -f "$ROOT$wants"
        fi
    fi
    if symlink "$UNIT_DIR/serial-getty@ttyGS0.service" /dev/null \
        "serial-getty@ttyGS0.service masked (the referee owns /dev/ttyGS0)"; then
        if on_system && [ "$DRY_RUN" -eq 0 ]; then
            systemctl stop serial-getty@ttyGS0.service 2>/dev/null || true
        fi
    fi
}

# --- 4. Debian packages -------------------------------------------------------

packages() {
    local missing=() package
    if ! on_system; then
        skip_fake_root "apt-get install ${APT_PACKAGES[*]}"
        return 0
    fi
    for package in "${APT_PACKAGES[@]}"; do
        installed "$package" || missing+=("$package")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        ok "Debian packages (${APT_PACKAGES[*]})"
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    if [ "$DRY_RUN" -eq 0 ]; then
        apt-get update -q
    fi
    local available=() unavailable=()
    for package in "${missing[@]}"; do
        if apt_has "$package"; then
            available+=("$package")
        else
            unavailable+=("$package")
        fi
    done
    for package in "${unavailable[@]}"; do
        if [ "$package" = python3-lgpio ]; then
            say "note: apt has no python3-lgpio here (plain Debian rather than Raspberry Pi" \
                "OS?): the lgpio wheel is pip-installed into $VENV instead"
            lgpio_from_pip=1
        elif [ "$package" = python3-rpi-lgpio ]; then
            say "note: apt has no python3-rpi-lgpio here: rpi-lgpio (the RPi.GPIO API over" \
                "lgpio, for an SPI panel's DC and RES pins) is pip-installed into $VENV instead"
            rpi_lgpio_from_pip=1
        else
            say "warning: apt has no package $package: it is left out" >&2
        fi
    done
    [ "${#available[@]}" -gt 0 ] || return 0
    # python3-rpi-lgpio and RPi.GPIO are the same module (RPi.GPIO): apt swaps
    # them in one run ("package-" removes it), RPi.GPIO not running on a Pi 5.
    local remove=() why=""
    if [[ " ${available[*]} " == *" python3-rpi-lgpio "* ]] && installed "$RPI_GPIO_PACKAGE"; then
        remove=("$RPI_GPIO_PACKAGE-")
        why=" ($RPI_GPIO_PACKAGE removed: RPi.GPIO does not run on a Pi 5, and"
        why+=" python3-rpi-lgpio is the same module over lgpio)"
    fi
    change "apt-get install ${available[*]}${remove[*]/#/ }$why" || return 0
    apt-get install -y -q --no-install-recommends "${available[@]}" "${remove[@]}"
}

# installed PACKAGE: true when dpkg has PACKAGE installed.
installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# apt_has PACKAGE: true when apt can install PACKAGE (it has a candidate version).
apt_has() {
    local candidate
    candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }')
    [ -n "$candidate" ] && [ "$candidate" != "(none)" ]
}

# --- 5. the service user ------------------------------------------------------

service_user() {
    local group joined
    joined=$(
        IFS=,
        echo "${SERVICE_GROUPS[*]}"
    )
    if ! on_system; then
        skip_fake_root "system user $SERVICE_USER in groups ${SERVICE_GROUPS[*]}"
        return 0
    fi
    for group in "${SERVICE_GROUPS[@]}"; do
        if getent group "$group" >/dev/null; then
            continue
        fi
        change "groupadd --system $group" && groupadd --system "$group"
    done
    if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
        if change "useradd --system $SERVICE_USER (groups ${SERVICE_GROUPS[*]})"; then
            useradd --system --user-group --no-create-home --home-dir "$STATE_DIR" \
                --shell /usr/sbin/nologin --comment "Euchre table referee" \
                --groups "$joined" "$SERVICE_USER"
            restart_needed=1
        fi
        return 0
    fi
    for group in "${SERVICE_GROUPS[@]}"; do
        if id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx "$group"; then
            continue
        fi
        if change "usermod -aG $group $SERVICE_USER"; then
            usermod -aG "$group" "$SERVICE_USER"
            restart_needed=1
        fi
    done
    ok "system user $SERVICE_USER (groups: $(id -nG "$SERVICE_USER"))"
}

# --- 6. the venv and the project ----------------------------------------------

source_hash() {
    (
        cd "$SRC"
        find pyproject.toml README.md euchre_core drivers firmware -type f \
            ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum
    ) | sha256sum | cut -d' ' -f1
}

python_and_project() {
    local stamp=$PREFIX/.installed-source wanted build
    if ! on_system; then
        skip_fake_root "venv $VENV (--system-site-packages) and pip install $SRC"
        return 0
    fi
    if [ -x "$VENV/bin/python" ] &&
        grep -qx 'include-system-site-packages = true' "$VENV/pyvenv.cfg"; then
        ok "venv $VENV"
    else
        python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
            echo "install-pi: needs Python 3.11 or newer (Raspberry Pi OS bookworm has" \
                "3.11, trixie 3.13)" >&2
            exit 1
        }
        if change "python3 -m venv --system-site-packages $VENV"; then
            mkdir -p "$PREFIX"
            python3 -m venv --clear --system-site-packages "$VENV"
        fi
    fi
    wanted=$(source_hash)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] &&
        [ -x "$VENV/bin/euchre-referee" ]; then
        ok "euchre-referee installed in $VENV (source unchanged)"
        return 0
    fi
    change "pip install the project from $SRC into $VENV" || return 0
    # Build from a copy: pip builds in the source tree, and this runs as root.
    build=$(mktemp -d)
    cp -r "$SRC/pyproject.toml" "$SRC/README.md" "$SRC/euchre_core" "$SRC/drivers" \
        "$SRC/firmware" "$build/"
    "$VENV/bin/python" -m pip install --quiet --upgrade "$build"
    rm -rf "$build"
    echo "$wanted" >"$stamp"
    restart_needed=1
}

# lgpio_wheel: where apt has no python3-lgpio, the lgpio module from the package
# index goes into the venv (gpiozero's pin factory on the Pi 5, bookworm and
# trixie): lgpio's wheel up to Python 3.12, adafruit-lgpio (the same module,
# built for 3.13 and later, which lgpio has no wheel for) after.
lgpio_wheel() {
    local python=python3 wheel=lgpio
    [ "$lgpio_from_pip" -eq 1 ] || return 0
    if ! on_system; then
        return 0
    fi
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import lgpio' 2>/dev/null; then
        ok "lgpio in $VENV"
        return 0
    fi
    [ -x "$VENV/bin/python" ] && python=$VENV/bin/python
    if "$python" -c 'import sys; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; then
        wheel=adafruit-lgpio
    fi
    change "pip install lgpio into $VENV (no python3-lgpio in apt; the wheel: $wheel)" ||
        return 0
    if ! "$VENV/bin/python" -m pip install --quiet "$wheel"; then
        say "warning: lgpio could not be installed: the referee will say 'GPIO not" \
            "available' until it is ($VENV/bin/python -m pip install $wheel)" >&2
    fi
    restart_needed=1
}

# rpi_lgpio_wheel: where apt has no python3-rpi-lgpio, rpi-lgpio (pure Python:
# the RPi.GPIO API over lgpio) goes into the venv, without its dependency: the
# lgpio module is already there (apt's python3-lgpio, or lgpio_wheel's), and
# pip would try to build lgpio where it has no wheel (Python 3.13).  In the venv
# it comes before any system RPi.GPIO.
rpi_lgpio_wheel() {
    [ "$rpi_lgpio_from_pip" -eq 1 ] || return 0
    if ! on_system; then
        return 0
    fi
    if [ -d "$VENV/lib" ] &&
        [ -n "$(find "$VENV/lib" -maxdepth 3 -name 'rpi_lgpio-*.dist-info' -print -quit)" ]; then
        ok "rpi-lgpio in $VENV"
        return 0
    fi
    change "pip install rpi-lgpio into $VENV (no python3-rpi-lgpio in apt)" || return 0
    if ! "$VENV/bin/python" -m pip install --quiet --no-deps rpi-lgpio; then
        say "warning: rpi-lgpio could not be installed: an SPI panel stays dark until it" \
            "is ($VENV/bin/python -m pip install --no-deps rpi-lgpio)" >&2
    fi
    restart_needed=1
}

# --- 7. the config file -------------------------------------------------------

config_file() {
    local conf=$CONF_DIR/referee.toml default=$SRC/hw/referee.toml
    write_file "$conf.default" 644 "$default" "shipped default config" || true
    if [ -f "$ROOT$conf" ]; then
        if cmp -s "$default" "$ROOT$conf"; then
            ok "config $conf"
        else
            ok "config $conf kept as edited (the shipped default: $conf.default)"
        fi
        return 0
    fi
    if write_file "$conf" 644 "$default" "config file"; then
        restart_needed=1
    fi
}

# --- 8. the unit ---------------------------------------------------------------

# club_network: the unit's drop-in for a club box, from the config's [club]
# broker (firmware/pi/network.py prints it, or nothing): written, or removed
# when the config names no broker.  Returns 0 when it changed (or would).
club_network() {
    local dropin=$UNIT_DIR/$UNIT.d/club.conf conf=$ROOT$CONF_DIR/referee.toml text tmp
    if [ ! -f "$conf" ]; then
        conf=$SRC/hw/referee.toml # not written yet (a dry run): the shipped one's
    fi
    if ! text=$(PYTHONPATH="$SRC" PYTHONDONTWRITEBYTECODE=1 "${PYTHON:-python3}" \
        -m firmware.pi.network "$conf"); then
        say "warning: the club drop-in is left as it is: fix [club] in $CONF_DIR/referee.toml" \
            "and run this again" >&2
        return 1
    fi
    if [ -z "$text" ]; then
        if [ -e "$ROOT$dropin" ]; then
            change "removed the club drop-in $dropin (no [club] broker: off the network)" ||
                return 0
            rm -f "$ROOT$dropin"
            return 0
        fi
        ok "no club drop-in (no [club] broker in the config: the box stays off the network)"
        return 1
    fi
    tmp=$(mktemp)
    printf '%s\n' "$text" >"$tmp"
    if write_file "$dropin" 644 "$tmp" "club drop-in: the network, to reach its broker only"; then
        rm -f "$tmp"
        return 0
    fi
    rm -f "$tmp"
    return 1
}

unit() {
    local unit_changed=0
    if write_file "$UNIT_DIR/$UNIT" 644 "$SRC/systemd/$UNIT" "systemd unit $UNIT"; then
        unit_changed=1
        restart_needed=1
    fi
    if club_network; then
        unit_changed=1
        restart_needed=1
    fi
    if symlink "$UNIT_DIR/multi-user.target.wants/$UNIT" "$UNIT_DIR/$UNIT" \
        "$UNIT enabled at boot"; then
        unit_changed=1
    fi
    if ! on_system; then
        skip_fake_root "systemctl daemon-reload; systemctl restart $UNIT"
        return 0
    fi
    if [ "$DRY_RUN" -eq 1 ]; then
        if [ "$restart_needed" -eq 1 ] || ! systemctl is-active --quiet "$UNIT"; then
            say "would: systemctl daemon-reload; systemctl restart $UNIT"
        fi
        return 0
    fi
    if [ "$unit_changed" -eq 1 ] || [ "$changes" -gt 0 ]; then
        systemctl daemon-reload
    fi
    if [ "$restart_needed" -eq 1 ]; then
        change "systemctl restart $UNIT" && systemctl restart "$UNIT"
    elif ! systemctl is-active --quiet "$UNIT"; then
        change "systemctl start $UNIT" && systemctl start "$UNIT"
    else
        ok "$UNIT running"
    fi
}

main() {
    if on_system && [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
        echo "install-pi: run it as root (sudo $0), or with --dry-run" >&2
        exit 1
    fi
    for file in systemd/$UNIT hw/referee.toml pyproject.toml; do
        [ -f "$SRC/$file" ] || {
            echo "install-pi: $SRC/$file is missing: run me from the repository" >&2
            exit 1
        }
    done
    the_system
    boot_config
    modules
    getty
    packages
    service_user
    python_and_project
    lgpio_wheel
    rpi_lgpio_wheel
    config_file
    unit
    if [ "$DRY_RUN" -eq 1 ]; then
        say "install-pi: would make $changes changes"
    else
        say "install-pi: $changes changes"
    fi
    if [ "$reboot_needed" -eq 1 ] && [ "$DRY_RUN" -eq 0 ]; then
        say "install-pi: reboot to turn on SPI, I2C at 400 kHz and the USB gadget serial port"
    fi
}

main
