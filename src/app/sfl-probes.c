/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflProbes"

#include "config.h"

#include "sfl-probes-private.h"

#include <errno.h>

#include "sfl-app.h"
#include "sfl-error.h"
#include "sfl-file-store.h"
#include "sfl-grpc.h"
#include "sfl-k8s-lease-doctor.h"
#include "sfl-lease-doc.h"
#include "sfl-membership.h"
#include "sfl-object-lease-coordinator.h"
#include "sfl-object-probe.h"
#include "sfl-object-store.h"
#include "sfl-platform.h"
#include "sfl-pubsub-client.h"
#include "sfl-pubsub-source.h"

/*
 * The doctor probes of the kind records: each checks what the daemon would really use (the
 * real state file with its lock, the real lease, the daemon's own object clients and Pub/Sub
 * endpoint) and waits for its asynchronous operation by iterating the doctor's main context.
 * The only writes are probe files and probe objects that are removed again.
 */

/* transfers and probes: bounded so a hung peer cannot hold the preflight forever */
#define SFL_PROBE_TIMEOUT_MS (15 * 1000)
/* the uid the packages and the container image run the service as */
#define SFL_PROBE_SERVICE_UID "10001"

/**
 * sfl_probe_env_add:
 * @env: the probe's environment
 * @name: the row's name
 * @status: its verdict
 * @format: the detail, printf-style
 *
 * Hands one row to the doctor, which redacts it before it is printed.
 */
void
sfl_probe_env_add(const SflProbeEnv *env, const gchar *name, SflProbeStatus status,
		  const gchar *format, ...)
{
	g_autofree gchar *text = NULL;
	va_list args;

	g_return_if_fail(env != NULL && env->add != NULL);
	g_return_if_fail(name != NULL && format != NULL);

	va_start(args, format);
	text = g_strdup_vprintf(format, args);
	va_end(args);
	env->add(env->add_data, name, status, text);
}

/**
 * sfl_probe_op_cb:
 * @source: the operation's object
 * @result: its result
 * @user_data: the #SflProbeOp
 *
 * The callback of an operation a probe (or the doctor) waits for with sfl_probe_op_wait().
 */
void
sfl_probe_op_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflProbeOp *op = user_data;
	op->result = g_object_ref(result);
	op->done = TRUE;
}

/**
 * sfl_probe_op_wait:
 * @context: the main context the operation runs on
 * @op: the operation, started with sfl_probe_op_cb()
 *
 * Iterates @context until @op finished; its result is then in @op->result.
 */
void
sfl_probe_op_wait(GMainContext *context, SflProbeOp *op)
{
	while (!op->done)
		g_main_context_iteration(context, TRUE);
}

/**
 * sfl_probe_op_clear:
 * @op: a finished operation
 *
 * Drops its result, so @op can be reused after setting done back to FALSE.
 */
void
sfl_probe_op_clear(SflProbeOp *op)
{
	g_clear_object(&op->result);
}

/* --- Pub/Sub --------------------------------------------------------------------------------- */

/* what to do about a refused GetTopic, by its status */
static const gchar *
sfl_probe_pubsub_hint(const SflGrpcStatus *status)
{
	switch (status->code) {
	case SFL_GRPC_NOT_FOUND:
		return "no such topic: check the name (/event/<Name> for platform events and "
		       "event monitoring streams, /data/<Name> for change events) and that the "
		       "feature is enabled in the org";
	case SFL_GRPC_PERMISSION_DENIED:
		return "the user may not read this topic; grant it in a permission set";
	case SFL_GRPC_UNAUTHENTICATED:
		return "the Pub/Sub API refused the session: the user needs \"API Enabled\" and "
		       "the connected app the api scope; check salesforce.org_id";
	case SFL_GRPC_UNAVAILABLE:
		if (status->transport)
			return "cannot reach sources.pubsub.endpoint (firewall, proxy, or the "
			       "wrong host:port)";
		return NULL;
	default:
		return NULL;
	}
}

static gboolean
sfl_probe_cancel_cb(gpointer user_data)
{
	g_cancellable_cancel(user_data);
	return G_SOURCE_REMOVE;
}

/* one GetTopic with the daemon's Pub/Sub client and token; a row named pubsub:<topic> */
static void
sfl_probe_pubsub_topic(const SflProbeEnv *env, SflPubsubClient *client, const SflSfToken *token,
		       const gchar *topic)
{
	g_autofree gchar *name = g_strconcat("pubsub:", topic, NULL);
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(GError) error = NULL;
	SflGrpcStatus status = { 0 };
	SflProbeOp op = { 0 };
	GSource *timeout = NULL;

	/* gRPC calls carry no deadline of their own: a silent endpoint must not hold the report */
	timeout = g_timeout_source_new(SFL_PROBE_TIMEOUT_MS);
	g_source_set_callback(timeout, sfl_probe_cancel_cb, cancellable, NULL);
	g_source_attach(timeout, env->context);
	/* the transport itself asks again when curl drops a message (SFL_GRPC_UNARY_ATTEMPTS) */
	sfl_pubsub_client_get_topic_async(client, token, topic, cancellable, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(env->context, &op);
	info = sfl_pubsub_client_get_topic_finish(client, op.result, &status, &error);
	sfl_probe_op_clear(&op);
	g_source_destroy(timeout);
	g_source_unref(timeout);
	if (info == NULL && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL,
				  "DEADLINE_EXCEEDED: GetTopic unanswered after %d s from %s",
				  SFL_PROBE_TIMEOUT_MS / 1000,
				  sfl_pubsub_client_get_base_url(client));
	} else if (info == NULL) {
		g_autofree gchar *what = sfl_grpc_status_describe(&status);
		const gchar *hint = sfl_probe_pubsub_hint(&status);

		/* no status came, or the answer did not decode: the client's message says so */
		if (status.code == SFL_GRPC_OK)
			sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		else
			sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s%s%s", what,
					  hint ? "; hint: " : "", hint ? hint : "");
	} else if (!info->can_subscribe) {
		/* SFL-0035: the original passed this, then every Subscribe was refused */
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL,
				  "%s: the user may not subscribe to this topic "
				  "(can_subscribe=false); grant the integration user a "
				  "permission set with read access to it (event monitoring "
				  "streams: \"View Real-Time Event Monitoring Data\"; change "
				  "events: read on the object)",
				  topic);
	} else {
		sfl_probe_env_add(env, name, SFL_PROBE_PASS,
				  "topic reachable, can_subscribe=true (schema %s)",
				  info->schema_id[0] != '\0' ? info->schema_id : "unknown");
	}
	sfl_grpc_status_clear(&status);
}

/**
 * sfl_probe_pubsub:
 * @env: the org under check
 * @name: the row's name
 *
 * One GetTopic per explicit topic the source would subscribe to, each a row pubsub:<topic>.
 */
void
sfl_probe_pubsub(const SflProbeEnv *env, const gchar *name)
{
	const SflPubsubConfig *ps = &env->sources->pubsub;
	guint n = ps->topics != NULL ? g_strv_length(ps->topics) : 0;
	guint wild = 0;
	g_autoptr(GPtrArray) topics = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflPubsubClient) client = NULL;
	SflProbeOp op = { 0 };

	if (!ps->enabled) {
		sfl_probe_env_add(env, name, SFL_PROBE_SKIP, "sources.pubsub is disabled");
		return;
	}
	if (n == 0) {
		sfl_probe_env_add(env, name, SFL_PROBE_SKIP, "sources.pubsub.topics is empty");
		return;
	}
	for (guint i = 0; i < n; i++)
		wild += g_str_equal(ps->topics[i], "*");
	if (wild == n) {
		sfl_probe_env_add(env, name, SFL_PROBE_WARN,
				  "sources.pubsub.topics is [\"*\"]: the discovered topics are not "
				  "probed; list them explicitly to check can_subscribe");
		return;
	}
	/* the topics the source would subscribe to, nothing else */
	topics = sfl_pubsub_explicit_topics(ps);
	if (topics->len == 0) {
		sfl_probe_env_add(env, name, SFL_PROBE_WARN,
				  "no explicit topic of sources.pubsub.topics passes "
				  "sources.pubsub.include/exclude: nothing would be subscribed%s",
				  wild > 0 ? " but the discovered topics" : "");
		return;
	}
	/* the token auth minted: the provider's cache answers */
	sfl_sf_auth_get_token_async(env->auth, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(env->context, &op);
	token = sfl_sf_auth_get_token_finish(env->auth, op.result, &error);
	sfl_probe_op_clear(&op);
	if (token == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "no token for the Pub/Sub API: %s",
				  error->message);
		return;
	}
	client = sfl_pubsub_client_new(env->loop, ps->endpoint, env->org_id);
	for (guint i = 0; i < topics->len; i++)
		sfl_probe_pubsub_topic(env, client, token, g_ptr_array_index(topics, i));
}

/* --- state and coordinator -------------------------------------------------------------------- */

/*
 * Proves the directory takes a durable atomic replace, as the daemon's writes need: a probe
 * file beside @path, written the same way, then removed. FALSE with a row added when it fails.
 */
static gboolean
sfl_probe_beside(const SflProbeEnv *env, const gchar *name, const gchar *path, const gchar *what)
{
	g_autofree gchar *probe = g_strconcat(path, ".sf2loki-doctor-probe", NULL);
	static const gchar payload[] = "sf2loki doctor probe\n";
	SflPlatformError perr = { 0 };
	g_autofree gchar *dir = g_path_get_dirname(path);

	if (sfl_platform_replace_file(probe, payload, sizeof(payload) - 1, &perr) ==
	    SFL_PLATFORM_OK) {
		SflPlatformError rm = { 0 };
		(void)sfl_platform_remove_file(probe, &rm);
		return TRUE;
	}
	if (perr.access_denied)
		sfl_probe_env_add(
			env, name, SFL_PROBE_FAIL,
			"cannot write beside the %s: %s; the service runs as uid %s: give "
			"it %s (e.g. chown -R %s %s)",
			what, perr.message, SFL_PROBE_SERVICE_UID, dir, SFL_PROBE_SERVICE_UID, dir);
	else
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "cannot write beside the %s: %s", what,
				  perr.message);
	return FALSE;
}

/* the live object read, then conditional writes tried on a probe key beside it */
static void
sfl_probe_object(const SflProbeEnv *env, const gchar *name, SflObjectClient *client,
		 const gchar *key)
{
	g_autofree gchar *probe_key = g_strconcat(key, ".doctor-probe", NULL);
	g_autofree gchar *detail = NULL;
	g_autoptr(GError) error = NULL;
	SflProbeOp op = { 0 };
	gboolean ok;

	sfl_object_probe_async(client, key, probe_key, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(env->context, &op);
	ok = sfl_object_probe_finish(client, op.result, &detail, &error);
	sfl_probe_op_clear(&op);
	if (!ok)
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
	else
		sfl_probe_env_add(env, name, SFL_PROBE_PASS, "%s", detail);
}

/* state.store s3 | gcs: the daemon's own client on the document's object */
void
sfl_probe_object_store(const SflProbeEnv *env, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) store = sfl_app_build_store(env->config, FALSE, &error);

	if (store == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		return;
	}
	sfl_probe_object(env, name, sfl_object_store_get_client(SFL_OBJECT_STORE(store)),
			 sfl_object_store_get_key(SFL_OBJECT_STORE(store)));
}

void
sfl_probe_file_store(const SflProbeEnv *env, const gchar *name)
{
	const SflConfig *config = env->config;
	const gchar *path = config->data.state.file.path;
	g_autofree gchar *dir = g_path_get_dirname(path);
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = NULL;
	g_autofree gchar *lock_path = NULL;
	g_autofree gchar *lock_note = NULL;
	SflPlatformLock *lock = NULL;
	SflProbeOp op = { 0 };
	gboolean opened;

	/* the daemon creates the directory at start-up; failing that is what it would hit first */
	if (g_mkdir_with_parents(dir, 0700) != 0) {
		int saved = errno;
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL,
				  "cannot create the state directory %s: %s%s", dir,
				  g_strerror(saved),
				  saved == EACCES || saved == EPERM
					  ? "; the service runs as uid " SFL_PROBE_SERVICE_UID
					  : "");
		return;
	}
	/* under no coordinator the daemon holds <path>.lock: take it, or name who has it */
	if (sfl_app_store_wants_exclusive(config)) {
		SflPlatformError perr = { 0 };
		gint64 holder = 0;
		SflPlatformStatus st;

		lock_path = sfl_file_store_lock_path(path);
		st = sfl_platform_lock_acquire(lock_path, &lock, &holder, &perr);
		if (st == SFL_PLATFORM_ERR_BUSY) {
			lock_note = g_strdup_printf("lock held by a running sf2loki (%s)",
						    perr.message);
		} else if (st != SFL_PLATFORM_OK) {
			sfl_probe_env_add(
				env, name, SFL_PROBE_FAIL, "cannot take %s: %s%s", lock_path,
				perr.message,
				perr.access_denied
					? "; the service runs as uid " SFL_PROBE_SERVICE_UID
					: "");
			return;
		}
	} else {
		lock_note = g_strdup_printf(
			"no lock under coordinate.type %s",
			sfl_config_enum_name("coordinate.type", config->data.coordinate.type));
	}
	/* the real file, read and parsed by the daemon's own store (never the lock: taken above) */
	store = sfl_app_build_store(config, FALSE, &error);
	if (store != NULL) {
		sfl_checkpoint_store_open_async(store, NULL, sfl_probe_op_cb, &op);
		sfl_probe_op_wait(env->context, &op);
		opened = sfl_checkpoint_store_open_finish(store, op.result, &error);
		sfl_probe_op_clear(&op);
		if (opened) {
			op.done = FALSE;
			sfl_checkpoint_store_snapshot_async(store, NULL, sfl_probe_op_cb, &op);
			sfl_probe_op_wait(env->context, &op);
			doc = sfl_checkpoint_store_snapshot_finish(store, op.result, &error);
			sfl_probe_op_clear(&op);
		}
	}
	if (lock != NULL) {
		sfl_platform_lock_release(lock);
		lock_note = g_strdup_printf("%s taken and released", lock_path);
	}
	if (doc == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		return;
	}
	if (!sfl_probe_beside(env, name, path, "state file"))
		return;
	if (g_file_test(path, G_FILE_TEST_EXISTS))
		sfl_probe_env_add(env, name, SFL_PROBE_PASS, "%s: %u key%s, writable; %s", path,
				  sfl_state_doc_size(doc), sfl_state_doc_size(doc) == 1 ? "" : "s",
				  lock_note);
	else
		sfl_probe_env_add(env, name, SFL_PROBE_PASS,
				  "%s: no state yet (a first run starts from the lookback), "
				  "writable; %s",
				  path, lock_note);
}

/* the Lease read and a server-side dry-run write of what the coordinator would write */
void
sfl_probe_k8s_lease(const SflProbeEnv *env, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflK8sLeaseApi) api = sfl_k8s_lease_api_new_from_config(
		&env->config->data.coordinate.k8s_lease, env->loop, &error);
	g_autofree gchar *detail = NULL;
	const gchar *note = sfl_k8s_lease_doctor_store_note(env->config);
	SflProbeOp op = { 0 };
	gboolean ok;

	if (api == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		return;
	}
	sfl_k8s_lease_doctor_probe_async(api, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(env->context, &op);
	ok = sfl_k8s_lease_doctor_probe_finish(api, op.result, &detail, &error);
	sfl_probe_op_clear(&op);
	if (!ok)
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
	else
		sfl_probe_env_add(env, name, SFL_PROBE_PASS, "%s%s%s", detail,
				  note != NULL ? "; " : "", note != NULL ? note : "");
}

/* s3_lease / gcs_lease: a read of the lease object, never a write to the live lease */
void
sfl_probe_object_lease(const SflProbeEnv *env, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCoordinator) coordinator =
		sfl_app_build_coordinator(env->config, env->loop, &error);
	SflObjectLeaseCoordinator *lease;

	if (coordinator == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		return;
	}
	lease = SFL_OBJECT_LEASE_COORDINATOR(coordinator);
	sfl_probe_object(env, name, sfl_object_lease_coordinator_get_client(lease),
			 sfl_object_lease_coordinator_get_key(lease));
}

/*
 * coordinate.sharding: the membership records listed the way a replica lists them (nothing
 * written: a record of the doctor's would count as a member for a ttl and be assigned units).
 * Liveness takes a ttl of watching, so the row names the records, not who is live.
 */
void
sfl_probe_sharding(const SflProbeEnv *env, const gchar *name)
{
	const SflShardingConfig *sc = &env->config->data.coordinate.sharding;
	g_autoptr(GError) error = NULL;
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(env->config, &error);
	g_autoptr(SflMemberStore) store = NULL;
	g_autoptr(GPtrArray) entries = NULL;
	g_autoptr(GString) holders = g_string_new(NULL);
	SflProbeOp op = { 0 };

	if (!sc->enabled) {
		sfl_probe_env_add(env, name, SFL_PROBE_SKIP,
				  "coordinate.sharding.enabled is false");
		return;
	}
	if (kind == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		return;
	}
	if (kind->build_members == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL,
				  "coordinate.type %s cannot shard in this build; set "
				  "coordinate.sharding.enabled to false",
				  kind->name);
		return;
	}
	store = kind->build_members(env->config, env->loop, &error);
	if (store == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "%s", error->message);
		return;
	}
	SFL_MEMBER_STORE_GET_CLASS(store)->list_async(store, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(env->context, &op);
	entries = SFL_MEMBER_STORE_GET_CLASS(store)->list_finish(store, op.result, &error);
	sfl_probe_op_clear(&op);
	if (entries == NULL) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL,
				  "cannot list the membership records (%s): %s", kind->name,
				  error->message);
		return;
	}
	for (guint i = 0; i < entries->len && i < 5; i++)
		g_string_append_printf(holders, "%s%s", i > 0 ? ", " : "",
				       ((const SflMemberEntry *)entries->pdata[i])->holder);
	if (entries->len > 5)
		g_string_append_printf(holders, " and %u more", entries->len - 5);
	sfl_probe_env_add(env, name, SFL_PROBE_PASS,
			  "%u membership record%s listed (%s); members_ttl %.1f s", entries->len,
			  entries->len == 1 ? "" : "s",
			  entries->len > 0 ? holders->str : "none yet",
			  (gdouble)sc->members_ttl / G_USEC_PER_SEC);
}

/* coordinate.type noop: one replica, nothing to probe */
void
sfl_probe_noop_coordinator(const SflProbeEnv *env, const gchar *name)
{
	sfl_probe_env_add(env, name, SFL_PROBE_SKIP,
			  "coordinate.type is noop (one replica, no lease)");
}

/* the lease file read and judged, and the directory's atomic replace proved */
void
sfl_probe_file_lease(const SflProbeEnv *env, const gchar *name)
{
	const SflCoordinateConfig *c = &env->config->data.coordinate;
	const gchar *path = c->file_lease.path;
	g_auto(SflLeaseDoc) lease = { 0 };
	g_autoptr(GError) error = NULL;
	gint64 now = sfl_clock_wall_usec(env->clock);
	gdouble left;
	gdouble age;

	if (!sfl_lease_doc_read(path, &lease, &error)) {
		sfl_probe_env_add(env, name, SFL_PROBE_FAIL, "cannot read the lease %s: %s", path,
				  error->message);
		return;
	}
	if (!sfl_probe_beside(env, name, path, "lease file"))
		return;
	switch (lease.state) {
	case SFL_LEASE_ABSENT:
		sfl_probe_env_add(env, name, SFL_PROBE_PASS,
				  "%s: no lease yet (the first replica to start leads); writable",
				  path);
		return;
	case SFL_LEASE_INVALID:
		sfl_probe_env_add(env, name, SFL_PROBE_WARN,
				  "%s holds no valid lease document (the next replica claims it); "
				  "writable",
				  path);
		return;
	case SFL_LEASE_VALID:
		break;
	}
	left = (gdouble)(lease.expires_at_usec - now) / G_USEC_PER_SEC;
	/* a holder renews by rewriting expires_at = now + ttl: the age of the last renewal */
	age = (gdouble)c->file_lease.ttl / G_USEC_PER_SEC - left;
	if (!sfl_lease_doc_expired(&lease, now))
		sfl_probe_env_add(env, name, SFL_PROBE_WARN,
				  "%s held by '%s' (epoch %" G_GUINT64_FORMAT
				  ", renewed %.1f s ago, "
				  "expires in %.1f s): a replica started now waits as standby; "
				  "writable",
				  path, lease.holder, lease.epoch, MAX(age, 0.0), left);
	else
		sfl_probe_env_add(env, name, SFL_PROBE_PASS,
				  "%s: last held by '%s' (epoch %" G_GUINT64_FORMAT
				  "), expired %.1f s "
				  "ago, claimable; writable",
				  path, lease.holder, lease.epoch, -left);
}
