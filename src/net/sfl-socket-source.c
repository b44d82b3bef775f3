/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSocketSource"

#include "config.h"

#include "sfl-socket-source.h"

#include "sfl-error.h"
#include "sfl-platform.h"

/*
 * A GSource that reports a socket's readiness level-triggered on every OS. Where the poll set
 * can hold the socket itself (POSIX) it is a plain poll watch. Where the loop can only wait on
 * a wakeup event whose signals are edge-like (Windows, see sfl_platform_socket_watch_new()),
 * readiness is asked of the platform before every wait and after every wakeup: whatever is
 * still ready is reported again, until the owner stops asking for it, so a readiness that was
 * signalled once and not consumed in full is never waited on.
 */

/*
 * Windows posts FD_WRITE again only after a send that would have blocked. Should a send leave
 * the buffer full without failing, nothing would signal the space freed: while output is
 * wanted and not possible, readiness is asked again at this interval as well.
 */
#define SFL_SOCKET_SOURCE_OUT_REPOLL_MS 50

typedef struct {
	GSource source;
	SflPlatformSocketWatch *watch;
	GPollFD pfd;
	GIOCondition wanted;
	GIOCondition ready;
	gboolean level;
} SflSocketSource;

/* one table for both directions, so the two sides of the mapping cannot drift apart; errors
 * are only ever reported, never asked for */
static const struct {
	GIOCondition condition;
	unsigned platform;
	gboolean askable;
} sfl_socket_source_conditions[] = {
	{ G_IO_IN, SFL_PLATFORM_SOCKET_IN, TRUE },
	{ G_IO_OUT, SFL_PLATFORM_SOCKET_OUT, TRUE },
	{ G_IO_ERR, SFL_PLATFORM_SOCKET_ERR, FALSE },
};

static unsigned
sfl_socket_source_to_platform(GIOCondition condition)
{
	unsigned wanted = 0;

	for (gsize i = 0; i < G_N_ELEMENTS(sfl_socket_source_conditions); i++) {
		if (sfl_socket_source_conditions[i].askable &&
		    (condition & sfl_socket_source_conditions[i].condition))
			wanted |= sfl_socket_source_conditions[i].platform;
	}
	return wanted;
}

static GIOCondition
sfl_socket_source_from_platform(unsigned ready)
{
	GIOCondition condition = 0;

	for (gsize i = 0; i < G_N_ELEMENTS(sfl_socket_source_conditions); i++) {
		if (ready & sfl_socket_source_conditions[i].platform)
			condition |= sfl_socket_source_conditions[i].condition;
	}
	return condition;
}

static GIOCondition
sfl_socket_source_ask(SflSocketSource *self)
{
	unsigned ready = sfl_platform_socket_watch_poll(
		self->watch, sfl_socket_source_to_platform(self->wanted));

	return sfl_socket_source_from_platform(ready);
}

static gboolean
sfl_socket_source_prepare(GSource *source, gint *timeout)
{
	SflSocketSource *self = (SflSocketSource *)source;

	*timeout = -1;
	if (self->level)
		return FALSE;
	self->ready = sfl_socket_source_ask(self);
	if (self->ready != 0) {
		*timeout = 0;
		return TRUE;
	}
	if (self->wanted & G_IO_OUT)
		*timeout = SFL_SOCKET_SOURCE_OUT_REPOLL_MS;
	return FALSE;
}

static gboolean
sfl_socket_source_check(GSource *source)
{
	SflSocketSource *self = (SflSocketSource *)source;

	if (self->level) {
		self->ready = self->pfd.revents & (self->wanted | G_IO_ERR | G_IO_HUP | G_IO_NVAL);
		if (self->ready & (G_IO_HUP | G_IO_NVAL))
			self->ready = (self->ready & ~(G_IO_HUP | G_IO_NVAL)) | G_IO_ERR;
		return self->ready != 0;
	}
	self->ready = sfl_socket_source_ask(self);
	return self->ready != 0;
}

static gboolean
sfl_socket_source_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	SflSocketSource *self = (SflSocketSource *)source;
	GIOCondition ready = self->ready;

	self->ready = 0;
	if (callback == NULL)
		return G_SOURCE_CONTINUE;
	return ((SflSocketSourceFunc)(void (*)(void))callback)(ready, user_data);
}

static void
sfl_socket_source_finalize(GSource *source)
{
	SflSocketSource *self = (SflSocketSource *)source;

	g_clear_pointer(&self->watch, sfl_platform_socket_watch_free);
}

static GSourceFuncs sfl_socket_source_funcs = {
	.prepare = sfl_socket_source_prepare,
	.check = sfl_socket_source_check,
	.dispatch = sfl_socket_source_dispatch,
	.finalize = sfl_socket_source_finalize,
};

/**
 * sfl_socket_source_new:
 * @sock: a socket (a file descriptor, or a Windows SOCKET); not owned, not closed
 * @condition: what to report: G_IO_IN, G_IO_OUT (errors and hang-ups always, as G_IO_ERR)
 * @error: return location for an error
 *
 * Only one source may exist per socket. Its callback is an #SflSocketSourceFunc.
 *
 * Returns: (transfer full) (nullable): the source, not attached
 */
GSource *
sfl_socket_source_new(gint64 sock, GIOCondition condition, GError **error)
{
	SflPlatformSocketWatch *watch = NULL;
	SflPlatformError perr = { 0 };
	SflSocketSource *self;
	SflPlatformStatus status;

	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	status = sfl_platform_socket_watch_new(sock, &watch, &perr);
	if (status != SFL_PLATFORM_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "%s", perr.message);
		return NULL;
	}
	self = (SflSocketSource *)g_source_new(&sfl_socket_source_funcs, sizeof(SflSocketSource));
	self->watch = watch;
	self->level = sfl_platform_socket_watch_is_level();
	self->pfd.fd = (gintptr)sfl_platform_socket_watch_pollable(watch);
	sfl_socket_source_set_condition(&self->source, condition);
	g_source_add_poll(&self->source, &self->pfd);
	return &self->source;
}

/**
 * sfl_socket_source_set_condition:
 * @source: a source from sfl_socket_source_new()
 * @condition: what to report from now on
 *
 * Changes what is watched without a new source (on Windows a new one would lose the event
 * selection's state). Call it from the source's context.
 */
void
sfl_socket_source_set_condition(GSource *source, GIOCondition condition)
{
	SflSocketSource *self = (SflSocketSource *)source;

	g_return_if_fail(source != NULL && source->source_funcs == &sfl_socket_source_funcs);
	self->wanted = condition & (G_IO_IN | G_IO_OUT);
	/* a level pollable is the socket: poll it for what is wanted; a wakeup for its signal */
	self->pfd.events = self->level ? (gushort)(self->wanted | G_IO_ERR | G_IO_HUP) : G_IO_IN;
}
