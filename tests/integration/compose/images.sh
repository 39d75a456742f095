#!/usr/bin/env bash
# images.sh — the images the compose stack builds FROM or runs, made locally
# when no registry can be reached (this machine reaches Debian's archive
# only). Idempotent; each image is made only when missing:
#   debian:bookworm        debootstrap --variant=minbase bookworm, imported
#   debian:bookworm-slim   the same root without docs, man pages and locales,
#                          and a dpkg filter that keeps them out later
#   postgres:15-bookworm   test stand-ins built from Debian's packages
#   redis:7-bookworm       (standins/; compose/ keeps the official names)
#   prom/prometheus:v2.42.0  (the observability profile's server)
# A pull is tried first (with a bound), so where a registry is reachable the
# real images are used. The debootstrap output is cached as tarballs in
# $SCRABBLE_IMAGE_CACHE (default /var/cache/scrabble-compose), so a machine
# whose engine lost its images re-imports in seconds instead of downloading
# the archive again. Every image made here carries the label
# org.scrabble.cached=1: callers keep those and remove everything else.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${SCRABBLE_IMAGE_CACHE:-/var/cache/scrabble-compose}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
log() { echo "images.sh: $*" >&2; }

have() { docker image inspect "$1" >/dev/null 2>&1; }
pull() { timeout 60 docker pull -q "$1" >/dev/null 2>&1; }

# The two root tarballs from one debootstrap.
make_roots() {
    [ -s "$CACHE/bookworm.tar" ] && [ -s "$CACHE/bookworm-slim.tar" ] && return 0
    command -v debootstrap >/dev/null || { log "debootstrap is not installed"; return 1; }
    mkdir -p "$CACHE"
    local tmp
    tmp=$(mktemp -d "$CACHE/root.XXXXXX")
    log "debootstrap --variant=minbase bookworm (once; cached in $CACHE)"
    if ! debootstrap --variant=minbase bookworm "$tmp/root" "$MIRROR" >"$tmp/log" 2>&1; then
        tail -5 "$tmp/log" >&2
        rm -rf "$tmp"
        return 1
    fi
    # What the official images add: security updates in the sources, and no
    # package lists in the image (every Dockerfile fetches its own).
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
        "$MIRROR" "$MIRROR" >"$tmp/root/etc/apt/sources.list"
    rm -rf "$tmp/root/var/lib/apt/lists/"* "$tmp/root/var/cache/apt/"*.bin "$tmp/root/var/cache/apt/archives/"*.deb
    tar -C "$tmp/root" --numeric-owner -cf "$tmp/bookworm.tar" .
    rm -rf "$tmp/root"/usr/share/doc/* "$tmp/root"/usr/share/man/* "$tmp/root"/usr/share/info/* \
        "$tmp/root"/usr/share/locale/*
    cat >"$tmp/root/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
# bookworm-slim: no documentation or translations from later installs
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
    tar -C "$tmp/root" --numeric-owner -cf "$tmp/bookworm-slim.tar" .
    mv "$tmp/bookworm.tar" "$tmp/bookworm-slim.tar" "$CACHE/"
    rm -rf "$tmp"
}

ensure_debian() {
    local tag=$1
    have "debian:$tag" && return 0
    pull "debian:$tag" && return 0
    make_roots
    log "importing debian:$tag from $CACHE/$tag.tar"
    docker import --change 'CMD ["bash"]' --change 'LABEL org.scrabble.cached=1' \
        "$CACHE/$tag.tar" "debian:$tag" >/dev/null
}

# A stand-in carries the hash of its directory (label org.scrabble.standin),
# so one built from another version of it is rebuilt; an image without
# org.scrabble.cached is the real one, pulled where a registry answered:
# kept.
ensure_standin() {
    local image=$1 dir=$2 sum labels old=""
    sum=$(cat "$here/standins/$dir"/* | sha256sum | cut -c1-16)
    if have "$image"; then
        old=$(docker image inspect -f '{{.Id}}' "$image")
        labels=$(docker image inspect -f '{{index .Config.Labels "org.scrabble.cached"}}:{{index .Config.Labels "org.scrabble.standin"}}' "$image")
        case $labels in
        "1:$sum") return 0 ;;
        1:*) ;;
        *) return 0 ;;
        esac
        log "the stand-in $image is out of date: rebuilding"
    elif pull "$image"; then
        return 0
    fi
    log "building the test stand-in $image from Debian's packages"
    docker build -q -t "$image" --label org.scrabble.cached=1 --label "org.scrabble.standin=$sum" \
        "$here/standins/$dir" >/dev/null
    # The superseded build (untagged now) would be kept forever as cache.
    [ -z "$old" ] || docker rmi "$old" >/dev/null 2>&1 || true
}

command -v docker >/dev/null || { log "docker is not installed"; exit 1; }
ensure_debian bookworm
ensure_debian bookworm-slim
ensure_standin postgres:15-bookworm postgres
ensure_standin redis:7-bookworm redis
ensure_standin prom/prometheus:v2.42.0 prometheus
log "ready: debian:bookworm debian:bookworm-slim postgres:15-bookworm redis:7-bookworm prom/prometheus:v2.42.0"
