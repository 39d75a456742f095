#!/bin/sh
# balancer.sh — the compose `balancer` service: nginx (compose/nginx.conf)
# with its upstream list kept equal to the gateway replicas.
#
# Docker's DNS answers the service name with one address per replica, but
# the nginx of Debian bookworm (1.22) resolves upstream names only when it
# loads its configuration. So this script resolves the name itself every
# BALANCER_RESOLVE_EVERY seconds and, when the set of addresses changed
# (scaled, recreated by an upgrade), rewrites the upstream file and reloads
# nginx gracefully (live calls finish on the old workers).
#
# Env: BALANCER_UPSTREAM  name:port of the gateways (default gateway:7000)
#      BALANCER_RESOLVE_EVERY  seconds between resolutions (default 2)
set -eu
upstream=${BALANCER_UPSTREAM:-gateway:7000}
every=${BALANCER_RESOLVE_EVERY:-2}
name=${upstream%:*}
port=${upstream##*:}
dir=/tmp/nginx
conf=/etc/scrabble/nginx.conf
mkdir -p "$dir"

# The sorted IPv4 addresses of the gateways, one per line.
resolve() {
    getent ahostsv4 "$name" 2>/dev/null | awk '{print $1}' | sort -u
}

# write ADDRS: the upstream file for these addresses.
write() {
    printf '%s\n' "$1" | awk -v port="$port" 'NF { printf "server %s:%s max_fails=1 fail_timeout=5s;\n", $1, port }' \
        >"$dir/upstream.conf.new"
    mv -f "$dir/upstream.conf.new" "$dir/upstream.conf"
}

addrs=$(resolve)
tries=0
while [ -z "$addrs" ]; do
    tries=$((tries + 1))
    [ "$tries" -le 30 ] || { echo "balancer: $name does not resolve" >&2; exit 1; }
    sleep 1
    addrs=$(resolve)
done
write "$addrs"
echo "balancer: gateways $(echo $addrs)" >&2

nginx -c "$conf" -e stderr -g 'daemon off;' &
nginx_pid=$!
stop() {
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    exit 0
}
trap stop TERM INT

while kill -0 "$nginx_pid" 2>/dev/null; do
    sleep "$every" &
    wait $! || true
    now=$(resolve)
    # An empty answer (DNS hiccup, every gateway down) keeps the last list.
    if [ -n "$now" ] && [ "$now" != "$addrs" ]; then
        addrs=$now
        write "$addrs"
        echo "balancer: gateways $(echo $addrs); reloading" >&2
        nginx -c "$conf" -e stderr -s reload || echo "balancer: reload failed" >&2
    fi
done
wait "$nginx_pid"
