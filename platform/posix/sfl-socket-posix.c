/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Socket readiness and TLS trust on POSIX. poll() is level-triggered, so the socket itself is
 * the pollable and a watch needs no state of its own beyond the descriptor.
 */

#include "sfl-platform.h"
#include "sfl-platform-private.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct SflPlatformSocketWatch {
	int fd;
};

SflPlatformStatus
sfl_platform_socket_watch_new(int64_t sock, SflPlatformSocketWatch **out_watch,
			      SflPlatformError *error)
{
	SflPlatformSocketWatch *watch;

	if (out_watch == NULL || sock < 0 || sock > INT32_MAX)
		return sfl_platform_error_set(error, SFL_PLATFORM_ERR_INVALID, 0,
					      "cannot watch socket %lld: invalid arguments",
					      (long long)sock);
	watch = calloc(1, sizeof(*watch));
	if (watch == NULL)
		return sfl_platform_error_set(error, SFL_PLATFORM_ERR_IO, ENOMEM,
					      "cannot watch socket %lld: out of memory",
					      (long long)sock);
	watch->fd = (int)sock;
	*out_watch = watch;
	return SFL_PLATFORM_OK;
}

bool
sfl_platform_socket_watch_is_level(void)
{
	return true;
}

int64_t
sfl_platform_socket_watch_pollable(const SflPlatformSocketWatch *watch)
{
	return watch != NULL ? watch->fd : -1;
}

unsigned
sfl_platform_socket_watch_poll(SflPlatformSocketWatch *watch, unsigned wanted)
{
	struct pollfd pfd = { .fd = watch != NULL ? watch->fd : -1 };
	unsigned ready = 0;
	int n;

	if (watch == NULL)
		return SFL_PLATFORM_SOCKET_ERR;
	if (wanted & SFL_PLATFORM_SOCKET_IN)
		pfd.events |= POLLIN;
	if (wanted & SFL_PLATFORM_SOCKET_OUT)
		pfd.events |= POLLOUT;
	do {
		n = poll(&pfd, 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return SFL_PLATFORM_SOCKET_ERR;
	if (pfd.revents & POLLIN)
		ready |= SFL_PLATFORM_SOCKET_IN;
	if (pfd.revents & POLLOUT)
		ready |= SFL_PLATFORM_SOCKET_OUT;
	if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
		ready |= SFL_PLATFORM_SOCKET_ERR;
	return ready & (wanted | SFL_PLATFORM_SOCKET_ERR);
}

void
sfl_platform_socket_watch_free(SflPlatformSocketWatch *watch)
{
	free(watch);
}

bool
sfl_platform_tls_native_ca(void)
{
	/* OpenSSL's default paths (and SSL_CERT_FILE/SSL_CERT_DIR) are the system store here */
	return false;
}
