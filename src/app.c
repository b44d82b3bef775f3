/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflApp"

#include "config.h"

#include "sfl-app.h"

#include "sfl-error.h"
#include "sfl-file-lease-coordinator.h"
#include "sfl-file-store.h"
#include "sfl-noop-coordinator.h"
#include "sfl-platform.h"

/**
 * sfl_app_store_wants_exclusive:
 * @config: the configuration
 *
 * Without a coordinator the file store's lock is what keeps a second instance away; under a
 * coordinator the lease does that job, and a process-lifetime lock would stop a promoted
 * standby from ever writing.
 *
 * Returns: whether the daemon holds the state file's lock
 */
gboolean
sfl_app_store_wants_exclusive(const SflConfig *config)
{
	return config->data.coordinate.type == SFL_COORDINATE_NOOP &&
	       config->data.state.store == SFL_STATE_STORE_FILE;
}

/**
 * sfl_app_build_store:
 * @config: the configuration
 * @exclusive: hold the file store's lock (see sfl_app_store_wants_exclusive())
 * @error: return location for an error
 *
 * Returns: (transfer full): the configured checkpoint store, not yet opened
 */
SflCheckpointStore *
sfl_app_build_store(const SflConfig *config, gboolean exclusive, GError **error)
{
	const SflStateConfig *state = &config->data.state;

	switch ((SflStateStoreKind)state->store) {
	case SFL_STATE_STORE_FILE:
		return sfl_file_store_new(state->file.path, exclusive);
	case SFL_STATE_STORE_S3:
	case SFL_STATE_STORE_GCS:
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "state.store: '%s' is not available in this build yet; use 'file'",
			    sfl_config_enum_name("state.store", state->store));
		return NULL;
	}
	g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INTERNAL, "unknown state.store");
	return NULL;
}

/**
 * sfl_app_coordinator_is_fenced:
 * @config: the configuration
 *
 * Returns: whether the coordinator hands out epochs the store must fence with
 */
gboolean
sfl_app_coordinator_is_fenced(const SflConfig *config)
{
	return config->data.coordinate.type != SFL_COORDINATE_NOOP;
}

/**
 * sfl_app_default_holder:
 *
 * Returns: (transfer full): "<hostname>-<pid>", the identity when none is configured
 */
gchar *
sfl_app_default_holder(void)
{
	gchar host[256] = "localhost";
	SflPlatformError perr = { 0 };

	if (sfl_platform_hostname(host, sizeof(host), &perr) != SFL_PLATFORM_OK)
		g_warning("cannot read the hostname (%s); using 'localhost'", perr.message);
	return g_strdup_printf("%s-%" G_GINT64_FORMAT, host, sfl_platform_pid());
}

/**
 * sfl_app_build_coordinator:
 * @config: the configuration
 * @error: return location for an error
 *
 * Returns: (transfer full): the configured coordinator, not yet running
 */
SflCoordinator *
sfl_app_build_coordinator(const SflConfig *config, GError **error)
{
	const SflCoordinateConfig *c = &config->data.coordinate;
	g_autofree gchar *holder = sfl_app_default_holder();

	switch ((SflCoordinateKind)c->type) {
	case SFL_COORDINATE_NOOP:
		return sfl_noop_coordinator_new(holder);
	case SFL_COORDINATE_FILE_LEASE: {
		g_autoptr(SflClock) clock = sfl_clock_get_system();
		const gchar *id =
			c->file_lease.holder_id != NULL && c->file_lease.holder_id[0] != '\0'
				? c->file_lease.holder_id
				: holder;
		return sfl_file_lease_coordinator_new(c->file_lease.path, c->file_lease.ttl,
						      c->file_lease.renew_interval, id, clock,
						      NULL);
	}
	case SFL_COORDINATE_K8S_LEASE:
		break;
	}
	g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
		    "coordinate.type: '%s' is not available in this build yet; use 'noop'",
		    sfl_config_enum_name("coordinate.type", c->type));
	return NULL;
}
