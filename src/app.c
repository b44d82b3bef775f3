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
#include "sfl-k8s-lease-coordinator.h"
#include "sfl-k8s-lease-doctor.h"
#include "sfl-noop-coordinator.h"
#include "sfl-gcs-client.h"
#include "sfl-object-lease-coordinator.h"
#include "sfl-object-store.h"
#include "sfl-s3-client.h"
#include "sfl-platform.h"
#include "sfl-pubsub-source.h"

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

/* how long one object-store request may take before it counts as a transient failure */
#define SFL_APP_OBJECT_TIMEOUT_MS 30000

/* one S3 bucket behind the default credential chain */
static SflObjectClient *
sfl_app_s3_client(const gchar *section, const gchar *bucket, const gchar *region,
		  const gchar *endpoint_url, guint timeout_ms, GError **error)
{
	g_autoptr(SflAwsCredentialProvider) creds =
		sfl_aws_credential_provider_new(NULL, NULL, NULL);
	SflObjectClient *client =
		sfl_s3_client_new(bucket, region, endpoint_url, creds, NULL, timeout_ms, error);

	if (client == NULL)
		g_prefix_error(error, "%s: ", section);
	return client;
}

/* one GCS bucket: a service-account key, application default credentials or an emulator */
static SflObjectClient *
sfl_app_gcs_client(const gchar *section, const gchar *bucket, const gchar *service_file,
		   guint timeout_ms, GError **error)
{
	SflObjectClient *client =
		sfl_gcs_client_new(bucket, service_file, NULL, NULL, timeout_ms, error);

	if (client == NULL)
		g_prefix_error(error, "%s: ", section);
	return client;
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
	case SFL_STATE_STORE_S3: {
		g_autoptr(SflObjectClient) client =
			sfl_app_s3_client("state.s3", state->s3.bucket, state->s3.region,
					  state->s3.endpoint_url, SFL_APP_OBJECT_TIMEOUT_MS, error);
		if (client == NULL)
			return NULL;
		return sfl_object_store_new(client, state->s3.key);
	}
	case SFL_STATE_STORE_GCS: {
		g_autoptr(SflObjectClient) client =
			sfl_app_gcs_client("state.gcs", state->gcs.bucket, state->gcs.service_file,
					   SFL_APP_OBJECT_TIMEOUT_MS, error);
		if (client == NULL)
			return NULL;
		return sfl_object_store_new(client, state->gcs.object_name);
	}
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

/* coordinate.type: k8s_lease, in-cluster or through coordinate.k8s_lease.kubeconfig */
static SflCoordinator *
sfl_app_build_k8s_lease(const SflConfig *config, SflCurlLoop *loop, const gchar *default_holder,
			GError **error)
{
	const SflK8sLeaseConfig *k = &config->data.coordinate.k8s_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflK8sLeaseApi) api = sfl_k8s_lease_api_new_from_config(k, loop, error);
	const gchar *identity = k->identity;
	const gchar *note = sfl_k8s_lease_doctor_store_note(config);

	if (api == NULL)
		return NULL;
	/* a pod's HOSTNAME is its name: unique among the replicas and readable in the Lease */
	if (identity == NULL || identity[0] == '\0')
		identity = g_getenv("HOSTNAME");
	if (identity == NULL || identity[0] == '\0')
		identity = default_holder;
	if (note != NULL)
		g_warning("%s", note);
	return sfl_k8s_lease_coordinator_new(api, k->lease_duration, k->renew_interval, identity,
					     clock);
}

/**
 * sfl_app_build_coordinator:
 * @config: the configuration
 * @loop: (nullable): the daemon's curl loop (k8s_lease makes its own without one)
 * @error: return location for an error
 *
 * Returns: (transfer full): the configured coordinator, not yet running
 */
SflCoordinator *
sfl_app_build_coordinator(const SflConfig *config, SflCurlLoop *loop, GError **error)
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
		return sfl_app_build_k8s_lease(config, loop, holder, error);
	case SFL_COORDINATE_S3_LEASE: {
		const SflS3LeaseConfig *l = &c->s3_lease;
		g_autoptr(SflClock) clock = sfl_clock_get_system();
		/* a lease request that takes longer than a renewal period is as good as failed */
		g_autoptr(SflObjectClient) client = sfl_app_s3_client(
			"coordinate.s3_lease", l->bucket, l->region, l->endpoint_url,
			(guint)MIN(l->renew_interval / 1000, SFL_APP_OBJECT_TIMEOUT_MS), error);
		if (client == NULL)
			return NULL;
		return sfl_object_lease_coordinator_new(
			client, l->key, l->ttl, l->renew_interval,
			l->holder_id != NULL && l->holder_id[0] != '\0' ? l->holder_id : holder,
			clock);
	}
	case SFL_COORDINATE_GCS_LEASE: {
		const SflGcsLeaseConfig *l = &c->gcs_lease;
		g_autoptr(SflClock) clock = sfl_clock_get_system();
		g_autoptr(SflObjectClient) client = sfl_app_gcs_client(
			"coordinate.gcs_lease", l->bucket, l->service_file,
			(guint)MIN(l->renew_interval / 1000, SFL_APP_OBJECT_TIMEOUT_MS), error);
		if (client == NULL)
			return NULL;
		return sfl_object_lease_coordinator_new(
			client, l->object_name, l->ttl, l->renew_interval,
			l->holder_id != NULL && l->holder_id[0] != '\0' ? l->holder_id : holder,
			clock);
	}
	}
	g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
		    "coordinate.type: '%s' is not available in this build yet; use 'noop'",
		    sfl_config_enum_name("coordinate.type", c->type));
	return NULL;
}

/* why none of @s can produce: NULL when one can, else the reasons joined with ", " */
static gchar *
sfl_app_sources_idle_reason(const SflSourcesConfig *s)
{
	const gchar *why[5] = { NULL };
	guint n = 0;
	g_autoptr(GPtrArray) topics = NULL;
	gboolean discovery = FALSE;

	if (s->eventlogfile.enabled)
		return NULL;
	if (s->eventlog_objects.enabled && s->eventlog_objects.objects->len > 0)
		return NULL;
	for (guint i = 0; s->pubsub.topics != NULL && s->pubsub.topics[i] != NULL; i++)
		discovery |= g_str_equal(s->pubsub.topics[i], "*");
	topics = sfl_pubsub_explicit_topics(&s->pubsub);
	/* "*" is only resolved at run time: the source then decides for itself */
	if (s->pubsub.enabled && (discovery || topics->len > 0))
		return NULL;

	why[n++] = "sources.eventlogfile.enabled is false";
	why[n++] = s->eventlog_objects.enabled ? "sources.eventlog_objects.objects is empty"
					       : "sources.eventlog_objects.enabled is false";
	if (!s->pubsub.enabled)
		why[n++] = "sources.pubsub.enabled is false";
	else if (s->pubsub.topics == NULL || s->pubsub.topics[0] == NULL)
		why[n++] = "sources.pubsub.topics is empty";
	else
		why[n++] = "sources.pubsub.include/exclude leave none of sources.pubsub.topics";
	if (s->apexlog.enabled)
		why[n++] = "sources.apexlog is not implemented in this version";
	return g_strjoinv(", ", (gchar **)why);
}

/**
 * sfl_app_dup_no_source_reason:
 * @config: a loaded configuration
 *
 * Decides offline whether a run would have nothing to ingest: no source of any org is
 * enabled with something to read. The original then finishes its pipeline at once and exits 0
 * (original §6.4); `run` does the same and `check` warns.
 *
 * Returns: (transfer full) (nullable): the reason naming the keys, or %NULL when some source
 *   can produce
 */
gchar *
sfl_app_dup_no_source_reason(const SflConfig *config)
{
	const SflConfigData *d = &config->data;
	g_autoptr(GString) text = NULL;

	g_return_val_if_fail(config != NULL, NULL);

	if (d->orgs->len == 0) {
		g_autofree gchar *why = sfl_app_sources_idle_reason(&d->sources);
		return why != NULL ? g_strdup_printf("no source is enabled (%s)", why) : NULL;
	}
	text = g_string_new("no source is enabled in any org (");
	for (guint i = 0; i < d->orgs->len; i++) {
		const SflOrgConfig *org = g_ptr_array_index(d->orgs, i);
		g_autofree gchar *why = sfl_app_sources_idle_reason(&org->sources);

		if (why == NULL)
			return NULL;
		g_string_append_printf(text, "%sorgs[%u] (%s): %s", i > 0 ? "; " : "", i, org->name,
				       why);
	}
	g_string_append_c(text, ')');
	return g_string_free(g_steal_pointer(&text), FALSE);
}
