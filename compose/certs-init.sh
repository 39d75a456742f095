#!/bin/sh
# certs-init.sh — the compose one-shot `certs` service: the private CA and the
# service identities (scripts/gen-certs.sh) in the CA volume, then each
# service's own files copied into that service's volume, owned by the image's
# user (uid 10001), keys mode 0600:
#   /ca                (volume certs-ca: the CA key stays here, in no service)
#   /out/<identity>    (volume certs-<identity>): ca.crt, <identity>.crt/.key,
#                      probe.crt/.key (the container's health check)
# Reused on later runs (gen-certs.sh keeps valid files); delete the certs-ca
# volume to make a new CA (docs/SECURITY.md, "Service identities").
set -eu
gen-certs.sh /ca
for id in gateway game-svc store-svc; do
    d=/out/$id
    mkdir -p "$d"
    for f in ca.crt "$id.crt" "$id.key" probe.crt probe.key; do
        cp /ca/"$f" "$d/$f.new" && mv -f "$d/$f.new" "$d/$f"
    done
    chown -R 10001:10001 "$d"
    chmod 0700 "$d"
    chmod 0600 "$d"/*.key
    chmod 0644 "$d"/*.crt
done
echo "certs-init: identities ready for gateway, game-svc, store-svc"
