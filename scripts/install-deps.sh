#!/usr/bin/env bash
# Installs the Debian packages the project needs, only those missing.
# Quiet and fast (one dpkg-query) when everything is already there.
# Env: INSTALL_OPTIONAL=0 skips the optional packages.
#      EXTRA_REQUIRED="pkg ..." adds required packages (tests use a name that
#        is in no archive to check the failure names it).
#      SKIP_APT_UPDATE=1 installs from the existing package lists, without
#        apt-get update first.
set -euo pipefail
LOG_TAG=install-deps.sh
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REQUIRED=(
    build-essential cmake pkg-config
    libgrpc-dev libabsl-dev protobuf-c-compiler libprotobuf-c-dev protobuf-compiler
    libpq-dev libhiredis-dev libcmocka-dev libmicrohttpd-dev libcjson-dev libssl-dev
    libunistring-dev
    postgresql-15 postgresql-client-15 redis-server
    nghttp2-client python3 python3-grpcio python3-protobuf python3-h2
    wamerican-large openssl tmux iproute2
)
read -r -a extra_required <<<"${EXTRA_REQUIRED:-}"
REQUIRED+=("${extra_required[@]}")
# Nice to have: fuzzers (clang), formatting (clang-format), validating
# compose/docker-compose.yml (docker-compose), promtool for the
# observability tests (prometheus, ~100 MB), and running the compose stack
# on a real engine (docker.io; debootstrap makes its base images where no
# registry is reachable: tests/integration/compose/images.sh). Missing ones
# only warn; the tests that need them skip.
OPTIONAL=(clang clang-format docker-compose prometheus docker.io debootstrap)

missing_of() {
    local p status
    for p in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
        [ "$status" = installed ] || echo "$p"
    done
}

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=600 "$@"
}

want=("${REQUIRED[@]}")
[ "${INSTALL_OPTIONAL:-1}" = 0 ] || want+=("${OPTIONAL[@]}")
mapfile -t missing < <(missing_of "${want[@]}")
[ ${#missing[@]} -eq 0 ] && exit 0

[ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}) and not root: run as root or apt-get install them"

log "installing: ${missing[*]}"
if [ "${SKIP_APT_UPDATE:-0}" != 1 ]; then
    apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null || log "warning: apt-get update failed; trying the existing lists"
fi
if ! apt_install "${missing[@]}"; then
    # One by one, to name what could not be installed.
    for p in "${missing[@]}"; do
        apt_install "$p" >/dev/null 2>&1 || log "could not install $p"
    done
fi

mapfile -t still < <(missing_of "${missing[@]}")
failed_required=()
for p in "${still[@]}"; do
    if [[ " ${OPTIONAL[*]} " == *" $p "* ]]; then
        log "warning: optional package $p could not be installed; the features that need it are skipped"
    else
        failed_required+=("$p")
    fi
done
[ ${#failed_required[@]} -eq 0 ] || die "could not install required package(s): ${failed_required[*]}"

# The packages' own system services (redis on 6379, a 'main' Postgres cluster
# on 5432) are never used here: ours run on their own ports. Stop the ones we
# just installed so they do not hold memory or ports; no init system is fine.
for p in "${missing[@]}"; do
    case "$p" in
    redis-server)
        if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
            systemctl disable --now redis-server >/dev/null 2>&1 || true
        else
            service redis-server stop >/dev/null 2>&1 || true
        fi
        ;;
    postgresql-15)
        command -v pg_ctlcluster >/dev/null 2>&1 && pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
        ;;
    esac
done
log "done"
