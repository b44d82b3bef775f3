/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflNoopCoordinator"

#include "config.h"

#include "sfl-noop-coordinator.h"

struct _SflNoopCoordinator {
	SflCoordinator parent_instance;
	gchar *holder;
	GSource *start_source;
};

G_DEFINE_TYPE(SflNoopCoordinator, sfl_noop_coordinator, SFL_TYPE_COORDINATOR)

static gboolean
sfl_noop_coordinator_lead_cb(gpointer user_data)
{
	SflNoopCoordinator *self = SFL_NOOP_COORDINATOR(user_data);
	g_clear_pointer(&self->start_source, g_source_unref);
	sfl_coordinator_set_leader(SFL_COORDINATOR(self), TRUE);
	return G_SOURCE_REMOVE;
}

/* leadership arrives from the loop, never inside the caller's run_async() */
static void
sfl_noop_coordinator_start(SflCoordinator *coordinator)
{
	SflNoopCoordinator *self = SFL_NOOP_COORDINATOR(coordinator);
	self->start_source = g_idle_source_new();
	g_source_set_callback(self->start_source, sfl_noop_coordinator_lead_cb, self, NULL);
	g_source_attach(self->start_source, g_main_context_get_thread_default());
}

static void
sfl_noop_coordinator_stop(SflCoordinator *coordinator)
{
	SflNoopCoordinator *self = SFL_NOOP_COORDINATOR(coordinator);
	if (self->start_source != NULL) {
		g_source_destroy(self->start_source);
		g_clear_pointer(&self->start_source, g_source_unref);
	}
}

/* a lone instance has nobody to demote to; it leads again at once */
static void
sfl_noop_coordinator_demote(SflCoordinator *coordinator)
{
	sfl_noop_coordinator_stop(coordinator);
	sfl_noop_coordinator_start(coordinator);
}

static const gchar *
sfl_noop_coordinator_get_holder(SflCoordinator *coordinator)
{
	return SFL_NOOP_COORDINATOR(coordinator)->holder;
}

static void
sfl_noop_coordinator_finalize(GObject *object)
{
	SflNoopCoordinator *self = SFL_NOOP_COORDINATOR(object);
	sfl_noop_coordinator_stop(SFL_COORDINATOR(self));
	g_free(self->holder);
	G_OBJECT_CLASS(sfl_noop_coordinator_parent_class)->finalize(object);
}

static void
sfl_noop_coordinator_class_init(SflNoopCoordinatorClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCoordinatorClass *coordinator_class = SFL_COORDINATOR_CLASS(klass);

	object_class->finalize = sfl_noop_coordinator_finalize;
	coordinator_class->start = sfl_noop_coordinator_start;
	coordinator_class->stop = sfl_noop_coordinator_stop;
	coordinator_class->demote = sfl_noop_coordinator_demote;
	coordinator_class->get_holder = sfl_noop_coordinator_get_holder;
}

static void
sfl_noop_coordinator_init(SflNoopCoordinator *self)
{
}

/**
 * sfl_noop_coordinator_new:
 * @holder: this instance's name, for logs
 *
 * Returns: (transfer full): a coordinator that always leads
 */
SflCoordinator *
sfl_noop_coordinator_new(const gchar *holder)
{
	SflNoopCoordinator *self = g_object_new(SFL_TYPE_NOOP_COORDINATOR, NULL);
	self->holder = g_strdup(holder);
	return SFL_COORDINATOR(self);
}
