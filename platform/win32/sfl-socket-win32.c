/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Socket readiness and TLS trust on Windows. A main loop waits on HANDLEs, not sockets, so a
 * watch binds a WSAEventSelect event to the socket as its wakeup. Winsock's network events
 * are edge-like: FD_READ is posted again only after a recv, FD_WRITE only after a send that
 * failed with WSAEWOULDBLOCK. A loop that trusted them alone would wait forever on data it
 * was told about once and left unread, or on a socket that was writable all along (the
 * 60-second push stalls of the first Windows build). So the event only wakes the loop, and
 * readiness is always asked of select() with a zero timeout, which is level-triggered.
 */

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <windows.h>

#include "sfl-platform.h"
#include "sfl-platform-private.h"

#include <stdlib.h>

struct SflPlatformSocketWatch {
	SOCKET sock;
	WSAEVENT event;
};

SflPlatformStatus
sfl_platform_socket_watch_new(int64_t sock, SflPlatformSocketWatch **out_watch,
			      SflPlatformError *error)
{
	SflPlatformSocketWatch *watch;
	int code;

	if (out_watch == NULL || sock < 0 || (SOCKET)sock == INVALID_SOCKET)
		return sfl_platform_error_set(error, SFL_PLATFORM_ERR_INVALID, 0,
					      "cannot watch socket %lld: invalid arguments",
					      (long long)sock);
	watch = calloc(1, sizeof(*watch));
	if (watch == NULL)
		return sfl_platform_error_set(error, SFL_PLATFORM_ERR_IO, ERROR_OUTOFMEMORY,
					      "cannot watch socket %lld: out of memory",
					      (long long)sock);
	watch->sock = (SOCKET)sock;
	watch->event = WSACreateEvent();
	if (watch->event == WSA_INVALID_EVENT) {
		code = WSAGetLastError();
		free(watch);
		return sfl_platform_error_set(error, SFL_PLATFORM_ERR_IO, code,
					      "cannot watch socket %lld: WSACreateEvent failed: "
					      "error %d",
					      (long long)sock, code);
	}
	/* every event that can change what select() answers: each one is a reason to ask again */
	if (WSAEventSelect(watch->sock, watch->event,
			   FD_READ | FD_WRITE | FD_OOB | FD_ACCEPT | FD_CONNECT | FD_CLOSE) ==
	    SOCKET_ERROR) {
		code = WSAGetLastError();
		WSACloseEvent(watch->event);
		free(watch);
		return sfl_platform_error_set(error, SFL_PLATFORM_ERR_IO, code,
					      "cannot watch socket %lld: WSAEventSelect failed: "
					      "error %d",
					      (long long)sock, code);
	}
	*out_watch = watch;
	return SFL_PLATFORM_OK;
}

bool
sfl_platform_socket_watch_is_level(void)
{
	return false;
}

int64_t
sfl_platform_socket_watch_pollable(const SflPlatformSocketWatch *watch)
{
	return watch != NULL ? (int64_t)(intptr_t)watch->event : -1;
}

unsigned
sfl_platform_socket_watch_poll(SflPlatformSocketWatch *watch, unsigned wanted)
{
	WSANETWORKEVENTS events;
	fd_set readable;
	fd_set writable;
	fd_set failed;
	struct timeval now = { 0, 0 };
	unsigned ready = 0;

	if (watch == NULL)
		return SFL_PLATFORM_SOCKET_ERR;
	/*
	 * reset the event before asking select(): a network event after this point signals it
	 * again, so nothing that happens after the answer below can be missed by the next wait
	 */
	if (WSAEnumNetworkEvents(watch->sock, watch->event, &events) == SOCKET_ERROR)
		return SFL_PLATFORM_SOCKET_ERR;

	FD_ZERO(&readable);
	FD_ZERO(&writable);
	FD_ZERO(&failed);
	if (wanted & SFL_PLATFORM_SOCKET_IN)
		FD_SET(watch->sock, &readable);
	if (wanted & SFL_PLATFORM_SOCKET_OUT)
		FD_SET(watch->sock, &writable);
	/* a failed non-blocking connect shows in the exception set */
	FD_SET(watch->sock, &failed);
	if (select(0, &readable, &writable, &failed, &now) == SOCKET_ERROR)
		return SFL_PLATFORM_SOCKET_ERR;
	if (FD_ISSET(watch->sock, &readable))
		ready |= SFL_PLATFORM_SOCKET_IN;
	if (FD_ISSET(watch->sock, &writable))
		ready |= SFL_PLATFORM_SOCKET_OUT;
	if (FD_ISSET(watch->sock, &failed))
		ready |= SFL_PLATFORM_SOCKET_ERR;
	return ready;
}

void
sfl_platform_socket_watch_free(SflPlatformSocketWatch *watch)
{
	if (watch == NULL)
		return;
	/* the socket may already be closed; then there is no selection left to undo */
	(void)WSAEventSelect(watch->sock, NULL, 0);
	WSACloseEvent(watch->event);
	free(watch);
}

bool
sfl_platform_tls_native_ca(void)
{
	/* the OpenSSL build here has no CA bundle: trust is the Windows certificate store */
	return true;
}
