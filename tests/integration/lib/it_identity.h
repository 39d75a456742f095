/*
 * it_identity.h — for integration-test clients that stand in for one of our
 * services: a channel that presents that service's identity over mutual
 * TLS, from the certificates tests/integration/lib/stack.sh made for the
 * test ($STACK_CERTS). Header-only: each test client is one file.
 */
#ifndef IT_IDENTITY_H
#define IT_IDENTITY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"

/* A channel to `target` (served by our service `server`, e.g. "store-svc")
 * presenting identity `as` ("gateway"). Without $STACK_CERTS (a stack run
 * with --insecure-internal) the channel is plaintext. Free with
 * rpc_channel_destroy. */
static inline rpc_channel *it_channel_as(const char *target, const char *server, const char *as)
{
    rpc_tls_config tls;
    rpc_identity_tls(getenv("STACK_CERTS"), as, server, &tls);
    rpc_channel_opts o = {.tls = &tls};
    return rpc_channel_create(target, &o);
}

#endif
