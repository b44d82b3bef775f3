/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflApp"

#include "config.h"

#include <errno.h>
#include <string.h>

#include "sfl-app.h"

#include "sfl-apexlog-source.h"
#include "sfl-elf-source.h"
#include "sfl-error.h"
#include "sfl-kinds.h"
#include "sfl-loki-sink.h"
#include "sfl-probes-private.h"
#include "sfl-file-lease-coordinator.h"
#include "sfl-file-store.h"
#include "sfl-k8s-lease-coordinator.h"
#include "sfl-k8s-lease-doctor.h"
#include "sfl-noop-coordinator.h"
#include "sfl-gcs-client.h"
#include "sfl-object-lease-coordinator.h"
#include "sfl-objects-source.h"
#include "sfl-object-store.h"
#include "sfl-s3-client.h"
#include "sfl-lease-doc.h"
#include "sfl-membership.h"
#include "sfl-object-member-store.h"
#include "sfl-k8s-member-store.h"
#include "sfl-unit-lease.h"
#include "sfl-platform.h"
#include "sfl-pubsub-source.h"

/**
 * sfl_app_backfill_file_path:
 * @path: state.file.path
 *
 * Returns: (transfer full): `<stem>-backfill<suffix>` next to @path (Python's Path.stem and
 * Path.suffix), the original's backfill state file
 */
gchar *
sfl_app_backfill_file_path(const gchar *path)
{
	g_autofree gchar *dir = g_path_get_dirname(path);
	g_autofree gchar *base = g_path_get_basename(path);
	const gchar *dot = strrchr(base, '.');
	g_autofree gchar *name = NULL;

	/* a leading dot is part of the stem, as in Python */
	if (dot == NULL || dot == base)
		name = g_strconcat(base, "-backfill", NULL);
	else
		name = g_strdup_printf("%.*s-backfill%s", (int)(dot - base), base, dot);
	return g_build_filename(dir, name, NULL);
}

/**
 * sfl_app_deadletter_dir:
 * @config: the configuration
 *
 * Returns: (transfer full): state.deadletter.path, or `deadletter` next to state.file.path
 * (the platform's state directory unless the file was moved)
 */
gchar *
sfl_app_deadletter_dir(const SflConfig *config)
{
	const SflStateConfig *state = &config->data.state;
	g_autofree gchar *dir = NULL;

	if (state->deadletter.path != NULL && *state->deadletter.path != '\0')
		return g_strdup(state->deadletter.path);
	dir = g_path_get_dirname(state->file.path);
	return g_build_filename(dir, "deadletter", NULL);
}

/**
 * sfl_app_open_deadletter:
 * @config: the configuration
 * @clock: the wall clock records are stamped with
 * @error: return location for an error
 *
 * Returns: (transfer full): the dead-letter store state.deadletter describes, or %NULL with
 * @error naming the directory and the key
 */
SflDeadletter *
sfl_app_open_deadletter(const SflConfig *config, SflClock *clock, GError **error)
{
	const SflStateDeadletterConfig *dl = &config->data.state.deadletter;
	g_autofree gchar *dir = sfl_app_deadletter_dir(config);
	SflDeadletter *store =
		sfl_deadletter_open(dir, (guint64)dl->max_bytes, dl->max_age, clock, error);
	if (store == NULL)
		g_prefix_error(error, "state.deadletter: ");
	return store;
}

/**
 * sfl_app_build_backfill_store:
 * @config: the configuration
 * @location: (out) (optional): where the document lives, for log lines
 * @error: return location for an error
 *
 * `backfill` keeps its state in the configured store (SFL-0049), built by the same kind
 * record as the daemon's. A store that locks its own document (the file) would be held by a
 * running daemon, so there the backfill gets its own document beside it, with its own lock:
 * the original's `<stem>-backfill<suffix>`. Object stores share the daemon's document: their
 * writes are compare-and-swap, and the `backfill:` keys are no daemon's.
 *
 * Returns: (transfer full): the store, not yet opened
 */
SflCheckpointStore *
sfl_app_build_backfill_store(const SflConfig *config, gchar **location, GError **error)
{
	const SflStoreKind *kind = sfl_store_kind_for_config(config, error);
	SflConfig copy = { 0 };
	g_autofree gchar *path = NULL;

	if (kind == NULL)
		return NULL;
	copy = *config;
	if (kind->self_locking) {
		path = sfl_app_backfill_file_path(config->data.state.file.path);
		copy.data.state.file.path = path;
	}
	if (location != NULL)
		*location = kind->dup_location(&copy);
	return kind->build(&copy, kind->self_locking, error);
}

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
	const SflStoreKind *store = sfl_store_kind_for_config(config, NULL);
	const SflCoordinatorKind *coordinator = sfl_coordinator_kind_for_config(config, NULL);

	return store != NULL && coordinator != NULL && store->self_locking && !coordinator->fenced;
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

/* --- checkpoint stores ------------------------------------------------------------------ */

static SflCheckpointStore *
sfl_app_file_store(const SflConfig *config, gboolean exclusive, GError **error)
{
	SflCheckpointStore *store = sfl_file_store_new(config->data.state.file.path, exclusive);

	sfl_file_store_set_concurrent(SFL_FILE_STORE(store),
				      config->data.coordinate.sharding.enabled);
	return store;
}

static gchar *
sfl_app_file_store_location(const SflConfig *config)
{
	return g_strdup(config->data.state.file.path);
}

static SflCheckpointStore *
sfl_app_s3_store(const SflConfig *config, gboolean exclusive, GError **error)
{
	const SflStateConfig *state = &config->data.state;
	g_autoptr(SflObjectClient) client =
		sfl_app_s3_client("state.s3", state->s3.bucket, state->s3.region,
				  state->s3.endpoint_url, SFL_APP_OBJECT_TIMEOUT_MS, error);

	if (client == NULL)
		return NULL;
	return sfl_object_store_new(client, state->s3.key);
}

static gchar *
sfl_app_s3_store_location(const SflConfig *config)
{
	const SflStateConfig *state = &config->data.state;
	return g_strdup_printf("s3://%s/%s", state->s3.bucket, state->s3.key);
}

static SflCheckpointStore *
sfl_app_gcs_store(const SflConfig *config, gboolean exclusive, GError **error)
{
	const SflStateConfig *state = &config->data.state;
	g_autoptr(SflObjectClient) client =
		sfl_app_gcs_client("state.gcs", state->gcs.bucket, state->gcs.service_file,
				   SFL_APP_OBJECT_TIMEOUT_MS, error);

	if (client == NULL)
		return NULL;
	return sfl_object_store_new(client, state->gcs.object_name);
}

static gchar *
sfl_app_gcs_store_location(const SflConfig *config)
{
	const SflStateConfig *state = &config->data.state;
	return g_strdup_printf("gs://%s/%s", state->gcs.bucket, state->gcs.object_name);
}

/* state.store: a new store is its folder in state/ plus one line here */
static const SflStoreKind sfl_app_store_kinds[] = {
	{ "file", "state.file", sfl_app_file_store, sfl_app_file_store_location, TRUE,
	  sfl_probe_file_store },
	{ "s3", "state.s3", sfl_app_s3_store, sfl_app_s3_store_location, FALSE,
	  sfl_probe_object_store },
	{ "gcs", "state.gcs", sfl_app_gcs_store, sfl_app_gcs_store_location, FALSE,
	  sfl_probe_object_store },
};

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
	const SflStoreKind *kind = sfl_store_kind_for_config(config, error);

	return kind != NULL ? kind->build(config, exclusive, error) : NULL;
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
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(config, NULL);

	return kind == NULL || kind->fenced;
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

/* the k8s identity rule of the single lease: configured, else the pod's name, else ours */
static const gchar *
sfl_app_k8s_identity(const SflK8sLeaseConfig *k, const gchar *default_holder)
{
	const gchar *identity = k->identity;

	/* a pod's HOSTNAME is its name: unique among the replicas and readable in the Lease */
	if (identity == NULL || identity[0] == '\0')
		identity = g_getenv("HOSTNAME");
	if (identity == NULL || identity[0] == '\0')
		identity = default_holder;
	return identity;
}

/* coordinate.type: k8s_lease, in-cluster or through coordinate.k8s_lease.kubeconfig */
static SflCoordinator *
sfl_app_build_k8s_lease(const SflConfig *config, SflCurlLoop *loop, const gchar *default_holder,
			GError **error)
{
	const SflK8sLeaseConfig *k = &config->data.coordinate.k8s_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflK8sLeaseApi) api = sfl_k8s_lease_api_new_from_config(k, loop, error);
	const gchar *identity = sfl_app_k8s_identity(k, default_holder);
	const gchar *note = sfl_k8s_lease_doctor_store_note(config);

	if (api == NULL)
		return NULL;
	if (note != NULL)
		g_warning("%s", note);
	return sfl_k8s_lease_coordinator_new(api, k->lease_duration, k->renew_interval, identity,
					     clock);
}

static SflCoordinator *
sfl_app_build_noop(const SflConfig *config, SflCurlLoop *loop, const gchar *holder, GError **error)
{
	return sfl_noop_coordinator_new(holder);
}

static SflCoordinator *
sfl_app_build_file_lease(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
			 GError **error)
{
	const SflFileLeaseConfig *l = &config->data.coordinate.file_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	const gchar *id = l->holder_id != NULL && l->holder_id[0] != '\0' ? l->holder_id : holder;

	return sfl_file_lease_coordinator_new(l->path, l->ttl, l->renew_interval, id, clock, NULL);
}

static SflCoordinator *
sfl_app_build_s3_lease(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
		       GError **error)
{
	const SflS3LeaseConfig *l = &config->data.coordinate.s3_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	/* a lease request that takes longer than a renewal period is as good as failed */
	g_autoptr(SflObjectClient) client = sfl_app_s3_client(
		"coordinate.s3_lease", l->bucket, l->region, l->endpoint_url,
		(guint)MIN(l->renew_interval / 1000, SFL_APP_OBJECT_TIMEOUT_MS), error);

	if (client == NULL)
		return NULL;
	return sfl_object_lease_coordinator_new(
		client, l->key, l->ttl, l->renew_interval,
		l->holder_id != NULL && l->holder_id[0] != '\0' ? l->holder_id : holder, clock);
}

static SflCoordinator *
sfl_app_build_gcs_lease(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
			GError **error)
{
	const SflGcsLeaseConfig *l = &config->data.coordinate.gcs_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflObjectClient) client = sfl_app_gcs_client(
		"coordinate.gcs_lease", l->bucket, l->service_file,
		(guint)MIN(l->renew_interval / 1000, SFL_APP_OBJECT_TIMEOUT_MS), error);

	if (client == NULL)
		return NULL;
	return sfl_object_lease_coordinator_new(
		client, l->object_name, l->ttl, l->renew_interval,
		l->holder_id != NULL && l->holder_id[0] != '\0' ? l->holder_id : holder, clock);
}

/* --- sharding (coordinate.sharding) ---------------------------------------------------- */

/* beside the single lease, on the storage every replica shares: <path>.members/ */
static SflMemberStore *
sfl_app_file_lease_members(const SflConfig *config, SflCurlLoop *loop, GError **error)
{
	const SflFileLeaseConfig *l = &config->data.coordinate.file_lease;
	g_autofree gchar *dir = g_strconcat(l->path, ".members", NULL);

	if (g_mkdir_with_parents(dir, 0750) != 0) {
		gint saved = errno;
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "coordinate.sharding: cannot create the membership directory %s: %s",
			    dir, g_strerror(saved));
		return NULL;
	}
	return sfl_file_member_store_new(dir);
}

/* a unit's name as one file name on every platform (':' and '/' are escaped) */
static gchar *
sfl_app_unit_file_name(const gchar *unit)
{
	return g_uri_escape_string(unit, NULL, FALSE);
}

/* one lease file per unit in <path>.units/, under the rules of the single lease file */
static SflCoordinator *
sfl_app_file_lease_unit(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
			const gchar *unit, GError **error)
{
	const SflFileLeaseConfig *l = &config->data.coordinate.file_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autofree gchar *dir = g_strconcat(l->path, ".units", NULL);
	g_autofree gchar *name = sfl_app_unit_file_name(unit);
	g_autofree gchar *base = g_strconcat(name, ".lease", NULL);
	g_autofree gchar *path = g_build_filename(dir, base, NULL);

	if (g_mkdir_with_parents(dir, 0750) != 0) {
		gint saved = errno;
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "coordinate.sharding: cannot create the unit lease directory %s: %s",
			    dir, g_strerror(saved));
		return NULL;
	}
	return sfl_file_lease_coordinator_new(path, l->ttl, l->renew_interval, holder, clock, NULL);
}

/*
 * k8s_lease shards in the single Lease's namespace: a Lease per member labelled with the
 * group (sfl-k8s-member-store.h) and a Lease per unit, `<name>-u-<16 hex>`, each under the
 * rules of the single Lease and with a client of its own on the daemon's curl loop.
 */
static SflMemberStore *
sfl_app_k8s_lease_members(const SflConfig *config, SflCurlLoop *loop, GError **error)
{
	const SflK8sLeaseConfig *k = &config->data.coordinate.k8s_lease;
	gint64 members_ttl = config->data.coordinate.sharding.members_ttl;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflKubeClient) client = sfl_kube_client_new_from_config(k, loop, error);

	if (client == NULL)
		return NULL;
	/* a membership request is renewed three times a members_ttl */
	return sfl_k8s_member_store_new(client, k->namespace_, k->name, members_ttl,
					(guint)MAX(members_ttl / 3 / 1000, 1), clock);
}

static SflCoordinator *
sfl_app_k8s_lease_unit(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
		       const gchar *unit, GError **error)
{
	const SflK8sLeaseConfig *k = &config->data.coordinate.k8s_lease;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflKubeClient) client = sfl_kube_client_new_from_config(k, loop, error);
	g_autofree gchar *name = NULL;
	g_autoptr(SflK8sLeaseApi) api = NULL;

	if (client == NULL)
		return NULL;
	name = sfl_unit_lease_k8s_name(k->name, unit);
	api = sfl_k8s_lease_api_new(client, k->namespace_, name, (guint)(k->renew_interval / 1000));
	return sfl_k8s_lease_coordinator_new(api, k->lease_duration, k->renew_interval, holder,
					     clock);
}

/*
 * The object-store leases shard beside the single lease's key: `<key>.members/` and
 * `<key>.units/`. Each unit lease gets a client of its own because a lease run closes its
 * client's connections when it stops, which must not cut another unit's request short.
 */
static SflObjectClient *
sfl_app_object_lease_client(const SflConfig *config, gint64 renew_usec, GError **error)
{
	const SflCoordinateConfig *c = &config->data.coordinate;
	guint timeout_ms = (guint)MIN(renew_usec / 1000, SFL_APP_OBJECT_TIMEOUT_MS);

	if (c->type == SFL_COORDINATE_S3_LEASE)
		return sfl_app_s3_client("coordinate.s3_lease", c->s3_lease.bucket,
					 c->s3_lease.region, c->s3_lease.endpoint_url, timeout_ms,
					 error);
	return sfl_app_gcs_client("coordinate.gcs_lease", c->gcs_lease.bucket,
				  c->gcs_lease.service_file, timeout_ms, error);
}

static const gchar *
sfl_app_object_lease_key(const SflConfig *config)
{
	const SflCoordinateConfig *c = &config->data.coordinate;

	return c->type == SFL_COORDINATE_S3_LEASE ? c->s3_lease.key : c->gcs_lease.object_name;
}

static SflMemberStore *
sfl_app_object_lease_members(const SflConfig *config, SflCurlLoop *loop, GError **error)
{
	/* a membership request is renewed three times a members_ttl */
	g_autoptr(SflObjectClient) client = sfl_app_object_lease_client(
		config, MAX(config->data.coordinate.sharding.members_ttl / 3, 1000), error);
	g_autofree gchar *prefix = NULL;

	if (client == NULL)
		return NULL;
	prefix = g_strconcat(sfl_app_object_lease_key(config), ".members/", NULL);
	return sfl_object_member_store_new(client, prefix);
}

static SflCoordinator *
sfl_app_object_lease_unit(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
			  const gchar *unit, GError **error)
{
	const SflCoordinateConfig *c = &config->data.coordinate;
	gint64 ttl = c->type == SFL_COORDINATE_S3_LEASE ? c->s3_lease.ttl : c->gcs_lease.ttl;
	gint64 renew = c->type == SFL_COORDINATE_S3_LEASE ? c->s3_lease.renew_interval
							  : c->gcs_lease.renew_interval;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflObjectClient) client = sfl_app_object_lease_client(config, renew, error);
	g_autofree gchar *key = NULL;

	if (client == NULL)
		return NULL;
	key = sfl_unit_lease_object_key(sfl_app_object_lease_key(config), unit);
	return sfl_object_lease_coordinator_new(client, key, ttl, renew, holder, clock);
}

/* --- is a live daemon writing the store? (`sf2loki state`) ------------------------------ */

/* the store's own lock answers this when it is opened */
static gboolean
sfl_app_noop_no_writer(const SflConfig *config, GError **error)
{
	return TRUE;
}

/* a sharded group holds no single lease: any unit lease still live is a writer */
static gboolean
sfl_app_file_lease_no_unit_writer(const SflConfig *config, gint64 now, GError **error)
{
	const SflFileLeaseConfig *l = &config->data.coordinate.file_lease;
	g_autofree gchar *dir = g_strconcat(l->path, ".units", NULL);
	g_autoptr(GError) local = NULL;
	g_autoptr(GDir) listing = g_dir_open(dir, 0, &local);
	const gchar *name;

	if (listing == NULL) {
		if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return TRUE; /* never sharded here */
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
			    "cannot tell whether a sharded replica is live: %s; pass --force if "
			    "no sf2loki is running",
			    local->message);
		return FALSE;
	}
	while ((name = g_dir_read_name(listing)) != NULL) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *unit = NULL;
		g_auto(SflLeaseDoc) lease = { 0 };

		if (!g_str_has_suffix(name, ".lease"))
			continue;
		path = g_build_filename(dir, name, NULL);
		g_clear_error(&local);
		if (!sfl_lease_doc_read(path, &lease, &local)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
				    "cannot tell whether a sharded replica is live: %s; pass "
				    "--force if no sf2loki is running",
				    local->message);
			return FALSE;
		}
		if (lease.holder == NULL || lease.holder[0] == '\0' ||
		    sfl_lease_doc_expired(&lease, now))
			continue;
		unit = g_strndup(name, strlen(name) - strlen(".lease"));
		{
			g_autofree gchar *id = g_uri_unescape_string(unit, NULL);
			g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
				    "a live replica ('%s', epoch %" G_GUINT64_FORMAT
				    ") holds the work unit '%s' (%s) and would overwrite this "
				    "change; stop every replica first, or pass --force",
				    lease.holder, lease.epoch, id != NULL ? id : unit, path);
		}
		return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_app_file_lease_no_writer(const SflConfig *config, GError **error)
{
	const SflFileLeaseConfig *l = &config->data.coordinate.file_lease;
	g_auto(SflLeaseDoc) lease = { 0 };
	g_autoptr(GError) local = NULL;
	gint64 now = sfl_platform_wall_ns() / 1000;

	/* whether or not this configuration shards: a group that did may still run */
	if (!sfl_app_file_lease_no_unit_writer(config, now, error))
		return FALSE;
	if (!sfl_lease_doc_read(l->path, &lease, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
			    "cannot tell whether a leader is live: %s; pass --force if no "
			    "sf2loki is running",
			    local->message);
		return FALSE;
	}
	if (!sfl_lease_doc_expired(&lease, now)) {
		g_autoptr(GDateTime) until =
			g_date_time_new_from_unix_utc(lease.expires_at_usec / G_USEC_PER_SEC);
		g_autofree gchar *text = g_date_time_format_iso8601(until);
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
			    "a live leader ('%s', epoch %" G_GUINT64_FORMAT ") holds %s "
			    "until %s and would overwrite this change; stop every replica "
			    "first, or pass --force",
			    lease.holder, lease.epoch, l->path, text);
		return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_app_k8s_lease_no_writer(const SflConfig *config, GError **error)
{
	const SflK8sLeaseConfig *k = &config->data.coordinate.k8s_lease;

	g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
		    "the Kubernetes Lease %s/%s cannot be checked offline; scale the "
		    "deployment to zero, then pass --force",
		    k->namespace_, k->name);
	return FALSE;
}

/* staleness of an object lease is judged by watching it for a ttl, not offline */
static gboolean
sfl_app_object_lease_no_writer(const SflConfig *config, GError **error)
{
	g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
		    "the %s lease object cannot be checked offline; stop every replica "
		    "first, then pass --force",
		    sfl_config_enum_name("coordinate.type", config->data.coordinate.type));
	return FALSE;
}

/* k8s_lease in-cluster outside a pod: nothing to build the client from until it runs there */
static const gchar *
sfl_app_k8s_lease_check_deferred(const SflConfig *config)
{
	const SflK8sLeaseConfig *k = &config->data.coordinate.k8s_lease;
	const gchar *host = g_getenv("KUBERNETES_SERVICE_HOST");

	if ((k->kubeconfig == NULL || k->kubeconfig[0] == '\0') &&
	    (host == NULL || host[0] == '\0'))
		/* checked in CI or on a laptop: the pod's service account is not there to read */
		return "coordinate.k8s_lease reads the pod's service account when sf2loki starts "
		       "in "
		       "the cluster (run `sf2loki doctor` there to check it)";
	return NULL;
}

/* coordinate.type: a new coordinator is its folder in coordinate/ plus one line here */
static const SflCoordinatorKind sfl_app_coordinator_kinds[] = {
	{ "noop", "coordinate", sfl_app_build_noop, FALSE, sfl_app_noop_no_writer, NULL,
	  sfl_probe_noop_coordinator },
	{ "file_lease", "coordinate.file_lease", sfl_app_build_file_lease, TRUE,
	  sfl_app_file_lease_no_writer, NULL, sfl_probe_file_lease, sfl_app_file_lease_members,
	  sfl_app_file_lease_unit },
	{ "k8s_lease", "coordinate.k8s_lease", sfl_app_build_k8s_lease, TRUE,
	  sfl_app_k8s_lease_no_writer, sfl_app_k8s_lease_check_deferred, sfl_probe_k8s_lease,
	  sfl_app_k8s_lease_members, sfl_app_k8s_lease_unit },
	{ "s3_lease", "coordinate.s3_lease", sfl_app_build_s3_lease, TRUE,
	  sfl_app_object_lease_no_writer, NULL, sfl_probe_object_lease,
	  sfl_app_object_lease_members, sfl_app_object_lease_unit },
	{ "gcs_lease", "coordinate.gcs_lease", sfl_app_build_gcs_lease, TRUE,
	  sfl_app_object_lease_no_writer, NULL, sfl_probe_object_lease,
	  sfl_app_object_lease_members, sfl_app_object_lease_unit },
};

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
	g_autofree gchar *holder = sfl_app_default_holder();
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(config, NULL);

	if (kind == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "coordinate.type: '%s' is not available in this build yet; use 'noop'",
			    sfl_config_enum_name("coordinate.type", config->data.coordinate.type));
		return NULL;
	}
	return kind->build(config, loop, holder, error);
}

/**
 * sfl_app_build_sink:
 * @config: the configuration
 * @loop: the daemon's curl loop
 * @push_timeout_ms: the deadline of one push, 0 for the sink's own default
 * @error: return location for an error
 *
 * The sink carries sink.loki.ca_file on its own requests.
 *
 * Returns: (transfer full) (nullable): the Loki sink, or %NULL with @error set
 */
SflSink *
sfl_app_build_sink(const SflConfig *config, SflCurlLoop *loop, guint push_timeout_ms,
		   GError **error)
{
	SflSink *sink = NULL;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	sink = sfl_loki_sink_new(loop, &config->data.sink.loki, error);
	if (sink != NULL && push_timeout_ms > 0)
		sfl_loki_sink_set_timeout(SFL_LOKI_SINK(sink), push_timeout_ms);
	return sink;
}

/* --- the source kinds ------------------------------------------------------------------ */

static gboolean
sfl_app_elf_wanted(const SflSourcesConfig *s)
{
	return s->eventlogfile.enabled;
}

static gboolean
sfl_app_objects_enabled(const SflSourcesConfig *s)
{
	return s->eventlog_objects.enabled;
}

static gboolean
sfl_app_pubsub_enabled(const SflSourcesConfig *s)
{
	return s->pubsub.enabled;
}

static const gchar *
sfl_app_elf_idle(const SflSourcesConfig *s)
{
	return s->eventlogfile.enabled ? NULL : "sources.eventlogfile.enabled is false";
}

/*
 * A sharded unit's source reads one item of its kind's list: a copy of the kind's section with
 * that list narrowed, kept alive by the source it was built for (sources keep their section).
 */
typedef struct {
	SflPubsubConfig pubsub;
	SflEventLogFileConfig eventlogfile;
	SflEventLogObjectsConfig objects;
	GStrv topics;	  /* (owned) */
	GPtrArray *items; /* (owned) borrowed entries of the configured list */
} SflAppNarrowed;

static void
sfl_app_narrowed_free(gpointer data)
{
	SflAppNarrowed *n = data;

	g_strfreev(n->topics);
	g_clear_pointer(&n->items, g_ptr_array_unref);
	g_free(n);
}

static SflSource *
sfl_app_keep_narrowed(SflSource *source, SflAppNarrowed *narrowed)
{
	if (source == NULL)
		sfl_app_narrowed_free(narrowed);
	else
		g_object_set_data_full(G_OBJECT(source), "sfl-app-narrowed", narrowed,
				       sfl_app_narrowed_free);
	return source;
}

/* "<prefix><item>" of a unit: the item, or NULL when @unit is not of this prefix */
static const gchar *
sfl_app_unit_item(const gchar *unit, const gchar *prefix)
{
	return unit != NULL && g_str_has_prefix(unit, prefix) ? unit + strlen(prefix) : NULL;
}

/* "*" reads every type the org has, found at run time: one unit, the whole source */
#define SFL_APP_ELF_ALL_TYPES "eventlogfile:*"

static gboolean
sfl_app_elf_has_wildcard(const SflSourcesConfig *s)
{
	const GPtrArray *types = s->eventlogfile.event_types;

	for (guint i = 0; types != NULL && i < types->len; i++)
		if (g_str_equal(((const SflElfTypeConfig *)g_ptr_array_index(types, i))->name, "*"))
			return TRUE;
	return types == NULL || types->len == 0;
}

static void
sfl_app_elf_units(const SflSourcesConfig *s, GPtrArray *out)
{
	const GPtrArray *types = s->eventlogfile.event_types;

	if (sfl_app_elf_has_wildcard(s)) {
		g_ptr_array_add(out, g_strdup(SFL_APP_ELF_ALL_TYPES));
		return;
	}
	for (guint i = 0; i < types->len; i++) {
		const SflElfTypeConfig *tc = g_ptr_array_index(types, i);
		g_autofree gchar *unit = g_strconcat("eventlogfile:", tc->name, NULL);

		if (s->eventlogfile.exclude != NULL &&
		    g_strv_contains((const gchar *const *)s->eventlogfile.exclude, tc->name))
			continue;
		if (!g_ptr_array_find_with_equal_func(out, unit, g_str_equal, NULL))
			g_ptr_array_add(out, g_steal_pointer(&unit));
	}
}

static SflSource *
sfl_app_elf_build(const SflSourceBuildArgs *a, GError **error)
{
	const gchar *item = sfl_app_unit_item(a->unit, "eventlogfile:");
	SflAppNarrowed *n = NULL;

	if (item == NULL || g_str_equal(a->unit, SFL_APP_ELF_ALL_TYPES))
		return SFL_SOURCE(sfl_elf_source_new(a->rest, &a->sources->eventlogfile, a->sources,
						     a->salt, error));
	n = g_new0(SflAppNarrowed, 1);
	n->eventlogfile = a->sources->eventlogfile;
	n->items = g_ptr_array_new();
	for (guint i = 0; i < a->sources->eventlogfile.event_types->len; i++) {
		SflElfTypeConfig *tc = g_ptr_array_index(a->sources->eventlogfile.event_types, i);
		if (g_str_equal(tc->name, item)) {
			g_ptr_array_add(n->items, tc);
			break;
		}
	}
	n->eventlogfile.event_types = n->items;
	return sfl_app_keep_narrowed(SFL_SOURCE(sfl_elf_source_new(a->rest, &n->eventlogfile,
								   a->sources, a->salt, error)),
				     n);
}

static gboolean
sfl_app_objects_wanted(const SflSourcesConfig *s)
{
	return s->eventlog_objects.enabled && s->eventlog_objects.objects->len > 0;
}

static const gchar *
sfl_app_objects_idle(const SflSourcesConfig *s)
{
	if (sfl_app_objects_wanted(s))
		return NULL;
	return s->eventlog_objects.enabled ? "sources.eventlog_objects.objects is empty"
					   : "sources.eventlog_objects.enabled is false";
}

static void
sfl_app_objects_units(const SflSourcesConfig *s, GPtrArray *out)
{
	for (guint i = 0; i < s->eventlog_objects.objects->len; i++) {
		const SflEventLogObjectConfig *oc =
			g_ptr_array_index(s->eventlog_objects.objects, i);
		g_autofree gchar *unit = g_strconcat("eventlog_objects:", oc->name, NULL);

		if (!g_ptr_array_find_with_equal_func(out, unit, g_str_equal, NULL))
			g_ptr_array_add(out, g_steal_pointer(&unit));
	}
}

static SflSource *
sfl_app_objects_build(const SflSourceBuildArgs *a, GError **error)
{
	const gchar *item = sfl_app_unit_item(a->unit, "eventlog_objects:");
	SflAppNarrowed *n = NULL;

	if (item == NULL)
		return SFL_SOURCE(sfl_objects_source_new(a->rest, &a->sources->eventlog_objects,
							 a->salt, error));
	n = g_new0(SflAppNarrowed, 1);
	n->objects = a->sources->eventlog_objects;
	n->items = g_ptr_array_new();
	for (guint i = 0; i < a->sources->eventlog_objects.objects->len; i++) {
		SflEventLogObjectConfig *oc =
			g_ptr_array_index(a->sources->eventlog_objects.objects, i);
		if (g_str_equal(oc->name, item)) {
			g_ptr_array_add(n->items, oc);
			break;
		}
	}
	n->objects.objects = n->items;
	return sfl_app_keep_narrowed(
		SFL_SOURCE(sfl_objects_source_new(a->rest, &n->objects, a->salt, error)), n);
}

static gboolean
sfl_app_apexlog_enabled(const SflSourcesConfig *s)
{
	return s->apexlog.enabled;
}

static const gchar *
sfl_app_apexlog_idle(const SflSourcesConfig *s)
{
	return s->apexlog.enabled ? NULL : "sources.apexlog.enabled is false";
}

static void
sfl_app_apexlog_units(const SflSourcesConfig *s, GPtrArray *out)
{
	g_ptr_array_add(out, g_strdup("apexlog"));
}

static SflSource *
sfl_app_apexlog_build(const SflSourceBuildArgs *a, GError **error)
{
	return SFL_SOURCE(sfl_apexlog_source_new(a->rest, &a->sources->apexlog, a->salt, error));
}

static gboolean
sfl_app_pubsub_wanted(const SflSourcesConfig *s)
{
	return s->pubsub.enabled && s->pubsub.topics != NULL && s->pubsub.topics[0] != NULL;
}

static const gchar *
sfl_app_pubsub_idle(const SflSourcesConfig *s)
{
	g_autoptr(GPtrArray) topics = NULL;
	gboolean discovery = FALSE;

	for (guint i = 0; s->pubsub.topics != NULL && s->pubsub.topics[i] != NULL; i++)
		discovery |= g_str_equal(s->pubsub.topics[i], "*");
	topics = sfl_pubsub_explicit_topics(&s->pubsub);
	/* "*" is only resolved at run time: the source then decides for itself */
	if (s->pubsub.enabled && (discovery || topics->len > 0))
		return NULL;
	if (!s->pubsub.enabled)
		return "sources.pubsub.enabled is false";
	if (s->pubsub.topics == NULL || s->pubsub.topics[0] == NULL)
		return "sources.pubsub.topics is empty";
	return "sources.pubsub.include/exclude leave none of sources.pubsub.topics";
}

/* "*" resolves topics at run time: the whole source is then one unit */
#define SFL_APP_PUBSUB_DISCOVERY "pubsub:*"

static void
sfl_app_pubsub_units(const SflSourcesConfig *s, GPtrArray *out)
{
	g_autoptr(GPtrArray) topics = NULL;

	if (s->pubsub.topics != NULL &&
	    g_strv_contains((const gchar *const *)s->pubsub.topics, "*")) {
		g_ptr_array_add(out, g_strdup(SFL_APP_PUBSUB_DISCOVERY));
		return;
	}
	topics = sfl_pubsub_explicit_topics(&s->pubsub);
	for (guint i = 0; i < topics->len; i++)
		g_ptr_array_add(out, g_strconcat("pubsub:", topics->pdata[i], NULL));
}

static SflSource *
sfl_app_pubsub_build(const SflSourceBuildArgs *a, GError **error)
{
	const gchar *item = sfl_app_unit_item(a->unit, "pubsub:");
	SflAppNarrowed *n = NULL;

	if (item == NULL || g_str_equal(a->unit, SFL_APP_PUBSUB_DISCOVERY))
		return SFL_SOURCE(sfl_pubsub_source_new(a->auth, a->rest, &a->sources->pubsub,
							a->sources, a->org_id, a->salt, error));
	n = g_new0(SflAppNarrowed, 1);
	n->pubsub = a->sources->pubsub;
	n->topics = g_new0(gchar *, 2);
	n->topics[0] = g_strdup(item);
	n->pubsub.topics = n->topics;
	return sfl_app_keep_narrowed(
		SFL_SOURCE(sfl_pubsub_source_new(a->auth, a->rest, &n->pubsub, a->sources,
						 a->org_id, a->salt, error)),
		n);
}

/* the sources of an org, in the order a term starts them: a new source is its folder in
 * sources/ plus one line here */
static const SflSourceKind sfl_app_source_kinds[] = {
	/* the EventLogFile source reads every type when none is listed: enabled is wanted */
	{ "eventlogfile", "sources.eventlogfile", sfl_app_elf_wanted, sfl_app_elf_wanted,
	  sfl_app_elf_idle, sfl_app_elf_build, NULL, sfl_elf_source_describe_checkpoint,
	  sfl_app_elf_units },
	{ "eventlog_objects", "sources.eventlog_objects", sfl_app_objects_enabled,
	  sfl_app_objects_wanted, sfl_app_objects_idle, sfl_app_objects_build, NULL,
	  sfl_objects_source_describe_checkpoint, sfl_app_objects_units },
	{ "apexlog", "sources.apexlog", sfl_app_apexlog_enabled, sfl_app_apexlog_enabled,
	  sfl_app_apexlog_idle, sfl_app_apexlog_build, NULL, sfl_apexlog_source_describe_checkpoint,
	  sfl_app_apexlog_units },
	{ "pubsub", "sources.pubsub", sfl_app_pubsub_enabled, sfl_app_pubsub_wanted,
	  sfl_app_pubsub_idle, sfl_app_pubsub_build, sfl_probe_pubsub,
	  sfl_pubsub_source_describe_checkpoint, sfl_app_pubsub_units },
};

/* --- lookups --------------------------------------------------------------------------- */

/* one lookup for every table: @names is the table's first field, @stride its record size */
static gconstpointer
sfl_app_kind_lookup(gconstpointer table, guint n, gsize stride, const gchar *key, const gchar *name,
		    GError **error)
{
	g_autoptr(GString) known = g_string_new(NULL);

	for (guint i = 0; i < n; i++) {
		const gchar *const *entry =
			(const gchar *const *)(gconstpointer)((const guint8 *)table + i * stride);
		if (name != NULL && g_str_equal(*entry, name))
			return entry;
		g_string_append_printf(known, "%s%s", i > 0 ? ", " : "", *entry);
	}
	g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
		    "%s: unknown kind '%s' (this build knows %s)", key, name != NULL ? name : "",
		    known->str);
	return NULL;
}

/**
 * sfl_store_kinds:
 * @n_kinds: (out): the number of records
 *
 * Returns: (transfer none): the checkpoint-store table
 */
const SflStoreKind *
sfl_store_kinds(guint *n_kinds)
{
	*n_kinds = G_N_ELEMENTS(sfl_app_store_kinds);
	return sfl_app_store_kinds;
}

/**
 * sfl_coordinator_kinds:
 * @n_kinds: (out): the number of records
 *
 * Returns: (transfer none): the coordinator table
 */
const SflCoordinatorKind *
sfl_coordinator_kinds(guint *n_kinds)
{
	*n_kinds = G_N_ELEMENTS(sfl_app_coordinator_kinds);
	return sfl_app_coordinator_kinds;
}

/**
 * sfl_source_kinds:
 * @n_kinds: (out): the number of records
 *
 * Returns: (transfer none): the source table
 */
const SflSourceKind *
sfl_source_kinds(guint *n_kinds)
{
	*n_kinds = G_N_ELEMENTS(sfl_app_source_kinds);
	return sfl_app_source_kinds;
}

/**
 * sfl_store_kind_lookup:
 * @name: a state.store value
 * @error: return location for an error naming state.store
 *
 * Returns: (transfer none) (nullable): the record
 */
const SflStoreKind *
sfl_store_kind_lookup(const gchar *name, GError **error)
{
	G_STATIC_ASSERT(G_STRUCT_OFFSET(SflStoreKind, name) == 0);
	return sfl_app_kind_lookup(sfl_app_store_kinds, G_N_ELEMENTS(sfl_app_store_kinds),
				   sizeof(SflStoreKind), "state.store", name, error);
}

/**
 * sfl_coordinator_kind_lookup:
 * @name: a coordinate.type value
 * @error: return location for an error naming coordinate.type
 *
 * Returns: (transfer none) (nullable): the record
 */
const SflCoordinatorKind *
sfl_coordinator_kind_lookup(const gchar *name, GError **error)
{
	G_STATIC_ASSERT(G_STRUCT_OFFSET(SflCoordinatorKind, name) == 0);
	return sfl_app_kind_lookup(sfl_app_coordinator_kinds,
				   G_N_ELEMENTS(sfl_app_coordinator_kinds),
				   sizeof(SflCoordinatorKind), "coordinate.type", name, error);
}

/**
 * sfl_source_kind_lookup:
 * @name: a source name, e.g. "pubsub"
 * @error: return location for an error naming sources
 *
 * Returns: (transfer none) (nullable): the record
 */
const SflSourceKind *
sfl_source_kind_lookup(const gchar *name, GError **error)
{
	G_STATIC_ASSERT(G_STRUCT_OFFSET(SflSourceKind, name) == 0);
	return sfl_app_kind_lookup(sfl_app_source_kinds, G_N_ELEMENTS(sfl_app_source_kinds),
				   sizeof(SflSourceKind), "sources", name, error);
}

/**
 * sfl_store_kind_for_config:
 * @config: the configuration
 * @error: return location for an error
 *
 * Returns: (transfer none) (nullable): the record of state.store
 */
const SflStoreKind *
sfl_store_kind_for_config(const SflConfig *config, GError **error)
{
	g_return_val_if_fail(config != NULL, NULL);
	return sfl_store_kind_lookup(sfl_config_enum_name("state.store", config->data.state.store),
				     error);
}

/**
 * sfl_coordinator_kind_for_config:
 * @config: the configuration
 * @error: return location for an error
 *
 * Returns: (transfer none) (nullable): the record of coordinate.type
 */
const SflCoordinatorKind *
sfl_coordinator_kind_for_config(const SflConfig *config, GError **error)
{
	g_return_val_if_fail(config != NULL, NULL);
	return sfl_coordinator_kind_lookup(
		sfl_config_enum_name("coordinate.type", config->data.coordinate.type), error);
}

/* why none of @s can produce: NULL when one can, else the reasons joined with ", " */
static gchar *
sfl_app_sources_idle_reason(const SflSourcesConfig *s)
{
	g_autoptr(GPtrArray) why = g_ptr_array_new();

	for (guint i = 0; i < G_N_ELEMENTS(sfl_app_source_kinds); i++) {
		const gchar *reason = sfl_app_source_kinds[i].idle_reason(s);
		if (reason == NULL)
			return NULL;
		g_ptr_array_add(why, (gpointer)reason);
	}
	g_ptr_array_add(why, NULL);
	return g_strjoinv(", ", (gchar **)why->pdata);
}

/**
 * sfl_app_dup_no_source_reason:
 * @config: a loaded configuration
 *
 * Decides offline whether a run would have nothing to ingest: no source of any org is
 * enabled with something to read. The original then finishes its pipeline at once and exits 0
 * (docs/cli.md, "run"); `run` does the same and `check` warns.
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

SflLogLevel
sfl_app_log_level(const SflConfig *config)
{
	switch ((SflConfigLogLevel)config->data.service.log_level) {
	case SFL_CONFIG_LOG_LEVEL_DEBUG:
		return SFL_LOG_LEVEL_DEBUG;
	case SFL_CONFIG_LOG_LEVEL_INFO:
		return SFL_LOG_LEVEL_INFO;
	case SFL_CONFIG_LOG_LEVEL_WARNING:
	case SFL_CONFIG_LOG_LEVEL_WARN:
		return SFL_LOG_LEVEL_WARNING;
	case SFL_CONFIG_LOG_LEVEL_ERROR:
		return SFL_LOG_LEVEL_ERROR;
	case SFL_CONFIG_LOG_LEVEL_CRITICAL:
		return SFL_LOG_LEVEL_CRITICAL;
	}
	return SFL_LOG_LEVEL_INFO;
}
