#!/usr/bin/env bash
# gen-certs.sh — a private CA and one certificate per service identity,
# for the mutual TLS between services (on by default: make run calls this
# on first start, the integration tests once per test).
#
#   scripts/gen-certs.sh [DIR]        (DIR defaults to var/certs)
#   scripts/gen-certs.sh --ca-cert FILE --ca-key FILE [DIR]
#                                     (issue from an operator's own CA)
#
# Writes DIR/ca.crt (and DIR/ca.key unless the CA is the operator's) and
# DIR/<name>.{crt,key} for the service identities gateway, game-svc,
# store-svc, probe (health checks, reflection) and admin (an operator's
# FinishGame and GetInvitation on store-svc), and for
# `client`, an end user's certificate for a TLS-enabled gateway. Every leaf
# is valid for server and client authentication and carries subjectAltName
# DNS:localhost, DNS:<name>, IP:127.0.0.1; a service identity also carries
# URI:spiffe://scrabble/<name>, which is what game-svc and store-svc
# authorize (docs/SECURITY.md, "Service identities"): `client` has none, so
# it is refused by every internal port. Keys are ECDSA P-256 (PKCS#8 PEM,
# mode 0600); DIR is made mode 0700.
#
# Idempotent: files that are present, unexpired for 30 more days, matching
# their key and (for leaves) signed by the current CA are kept; anything else
# is regenerated. A new CA re-issues every leaf. Exits non-zero with a
# message on any failure. With the generated CA, its key sits next to the
# certificates (fine for one machine); production brings its own CA.
set -euo pipefail

readonly NAMES=(gateway game-svc store-svc probe admin client)
readonly IDENTITIES=" gateway game-svc store-svc probe admin " # carry a spiffe URI
readonly CA_DAYS=3650
readonly LEAF_DAYS=825
readonly MIN_LEFT=$((30 * 24 * 3600)) # regenerate when less than this is left

die() {
    echo "gen-certs: $*" >&2
    exit 1
}

own_ca_crt="" own_ca_key=""
while [[ $# -gt 0 ]]; do
    case $1 in
    --ca-cert) own_ca_crt=${2:-}; shift 2 || die "--ca-cert needs a file" ;;
    --ca-key) own_ca_key=${2:-}; shift 2 || die "--ca-key needs a file" ;;
    -*) die "unknown option $1 (usage: gen-certs.sh [--ca-cert FILE --ca-key FILE] [DIR])" ;;
    *) break ;;
    esac
done
[[ -z $own_ca_crt && -z $own_ca_key ]] || [[ -n $own_ca_crt && -n $own_ca_key ]] ||
    die "--ca-cert and --ca-key go together"
dir=${1:-var/certs}
command -v openssl >/dev/null 2>&1 || die "openssl not found (apt-get install openssl)"
umask 077
mkdir -p "$dir" || die "cannot create directory $dir"
[[ -w $dir ]] || die "directory $dir is not writable"
chmod 0700 "$dir" || die "cannot chmod $dir"
ca_key=$dir/ca.key

# Scratch space on the same filesystem, so finished files move in atomically.
work=$(mktemp -d "$dir/.gen-certs.XXXXXX") || die "cannot create a temporary directory in $dir"
trap 'rm -rf "$work"' EXIT

# Runs an openssl command; on failure shows its output and stops.
ossl() {
    if ! openssl "$@" >"$work/out" 2>&1; then
        cat "$work/out" >&2
        die "openssl $1 failed"
    fi
}

new_key() {
    ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
}

# Whether cert $1 and key $2 exist, hold the same public key and the
# certificate is valid for MIN_LEFT more seconds.
pair_ok() {
    [[ -s $1 && -s $2 ]] || return 1
    openssl x509 -in "$1" -noout -checkend "$MIN_LEFT" >/dev/null 2>&1 || return 1
    local a b
    a=$(openssl x509 -in "$1" -noout -pubkey 2>/dev/null) || return 1
    b=$(openssl pkey -in "$2" -pubout 2>/dev/null) || return 1
    [[ -n $a && $a == "$b" ]]
}

ca_ok() {
    pair_ok "$dir/ca.crt" "$dir/ca.key"
}

# Whether the leaf for name $1 is usable: a good pair, signed by the current
# CA, with the SAN entries this script puts in.
leaf_ok() {
    local name=$1
    pair_ok "$dir/$name.crt" "$dir/$name.key" || return 1
    openssl verify -CAfile "$dir/ca.crt" "$dir/$name.crt" >/dev/null 2>&1 || return 1
    local san
    san=$(openssl x509 -in "$dir/$name.crt" -noout -ext subjectAltName 2>/dev/null) || return 1
    [[ $san == *"DNS:localhost"* && $san == *"DNS:$name"* && $san == *"IP Address:127.0.0.1"* ]] ||
        return 1
    if [[ $IDENTITIES == *" $name "* ]]; then
        [[ $san == *"URI:spiffe://scrabble/$name"* ]]
    else
        [[ $san != *"URI:"* ]]
    fi
}

make_ca() {
    cat >"$work/ca.cnf" <<'CNF'
[req]
distinguished_name = dn
prompt = no
x509_extensions = v3_ca
[dn]
O = scrabble-dev
CN = scrabble development CA
[v3_ca]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
CNF
    new_key "$work/ca.key"
    ossl req -x509 -new -config "$work/ca.cnf" -key "$work/ca.key" -sha256 \
        -days "$CA_DAYS" -set_serial "0x$(openssl rand -hex 16)" -out "$work/ca.crt"
    chmod 0644 "$work/ca.crt"
    mv -f "$work/ca.key" "$dir/ca.key"
    mv -f "$work/ca.crt" "$dir/ca.crt"
    echo "gen-certs: new CA $dir/ca.crt"
}

make_leaf() {
    local name=$1 uri=""
    [[ $IDENTITIES == *" $name "* ]] && uri=",URI:spiffe://scrabble/$name"
    cat >"$work/$name.ext" <<EXT
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid,issuer
subjectAltName = DNS:localhost,DNS:$name,IP:127.0.0.1$uri
EXT
    new_key "$work/$name.key"
    ossl req -new -key "$work/$name.key" -subj "/O=scrabble-dev/CN=$name" -out "$work/$name.csr"
    ossl x509 -req -in "$work/$name.csr" -CA "$dir/ca.crt" -CAkey "$ca_key" -sha256 \
        -days "$LEAF_DAYS" -set_serial "0x$(openssl rand -hex 16)" \
        -extfile "$work/$name.ext" -out "$work/$name.crt"
    chmod 0644 "$work/$name.crt"
    mv -f "$work/$name.key" "$dir/$name.key"
    mv -f "$work/$name.crt" "$dir/$name.crt"
    echo "gen-certs: issued $dir/$name.crt"
}

if [[ -n $own_ca_crt ]]; then
    # The operator's CA: its certificate is what every service trusts; its
    # key is only read here and never copied.
    pair_ok "$own_ca_crt" "$own_ca_key" || die "$own_ca_crt and $own_ca_key are not a valid, matching CA pair"
    if ! cmp -s "$own_ca_crt" "$dir/ca.crt" 2>/dev/null; then
        cp "$own_ca_crt" "$work/ca.crt" && chmod 0644 "$work/ca.crt" && mv -f "$work/ca.crt" "$dir/ca.crt" ||
            die "cannot copy $own_ca_crt into $dir"
        rm -f "$dir/ca.key"
    fi
    ca_key=$own_ca_key
else
    ca_ok || make_ca
fi
for name in "${NAMES[@]}"; do
    leaf_ok "$name" || make_leaf "$name"
    leaf_ok "$name" || die "certificate for $name does not verify after issuing it"
done
echo "gen-certs: certificates in $dir are up to date"
