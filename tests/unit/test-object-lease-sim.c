/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestObjectLeaseSim"

#include "config.h"

#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-gcs-client.h"
#include "sfl-object-lease-coordinator.h"
#include "sfl-object-member-store.h"
#include "sfl-s3-client.h"
#include "sfl-test-coordinator.h"
#include "sfl-test-sim.h"

/*
 * s3_lease and gcs_lease on a fake clock against the real clients and the simulators: the
 * preconditions on the wire (If-None-Match: * / ifGenerationMatch=0 for the first claim, the
 * current ETag / generation on renewal), a 412 race demoting without a re-read, 5xx reads never
 * leading to a write, and two standbys racing one stale lease with exactly one winner.
 *
 * Timers run on the fake clock; HTTP runs in real time. The clock moves only while nothing
 * happens on the loop for a moment, so a request in flight sees at most a step of fake time.
 */

#define SEC   G_USEC_PER_SEC
#define TTL   (30 * SEC)
#define RENEW (10 * SEC)
#define STEP  (250 * 1000)
#define KEY   "sf2loki/leader.json"

static GPtrArray *warnings; /* (element-type utf8) */

static gboolean
warned(const gchar *needle)
{
	return sfl_test_warnings_count(needle) > 0;
}

typedef SflTestCoord Replica;

typedef struct {
	gboolean gcs;
	gchar *base;
	SflTestSim *proc;
	SflCurlLoop *loop;
	SflClock *clock;
	Replica a;
	Replica b;
} Fixture;

static SflObjectClient *
make_client(Fixture *fx)
{
	g_autoptr(GError) error = NULL;
	SflObjectClient *client;

	if (fx->gcs) {
		g_autofree gchar *emulator = g_strdup_printf("STORAGE_EMULATOR_HOST=%s", fx->base);
		const gchar *env[] = { emulator, NULL };
		client = sfl_gcs_client_new("lease", NULL, env, fx->clock, 5000, &error);
	} else {
		const gchar *env[] = { "AWS_ACCESS_KEY_ID=AKIDSIMULATOR",
				       "AWS_SECRET_ACCESS_KEY=sim/secret+key", "HOME=/nonexistent",
				       NULL };
		g_autoptr(SflAwsCredentialProvider) creds =
			sfl_aws_credential_provider_new(env, NULL, NULL);
		/* x-amz-date from the real clock: the simulator checks the skew */
		client = sfl_s3_client_new("lease", "us-east-1", fx->base, creds, NULL, 5000,
					   &error);
	}
	g_assert_no_error(error);
	return client;
}

static void
replica_start(Fixture *fx, Replica *r, const gchar *holder)
{
	g_autoptr(SflObjectClient) client = make_client(fx);

	/* no draining here: the two standbys of a race start in the same loop iteration */
	r->coord = sfl_object_lease_coordinator_new(client, KEY, TTL, RENEW, holder, fx->clock);
	sfl_test_coord_run(r);
}

static void
replica_clear(Replica *r)
{
	if (r->coord == NULL)
		return;
	g_cancellable_cancel(r->run);
	while (r->running)
		g_main_context_iteration(NULL, TRUE);
	g_clear_object(&r->run);
	g_clear_object(&r->coord);
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	fx->gcs = g_strcmp0(data, "gcs") == 0;
	g_ptr_array_set_size(warnings, 0);
	fx->loop = sfl_curl_loop_new();
	fx->clock = sfl_fake_clock_new(g_get_real_time());
	fx->base = fx->gcs ? sfl_test_gcs_sim_start(NULL, &fx->proc)
			   : sfl_test_s3_sim_start(NULL, &fx->proc);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	replica_clear(&fx->a);
	replica_clear(&fx->b);
	sfl_test_sim_stop(&fx->proc);
	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_clock_unref(fx->clock);
	g_free(fx->base);
}

static gboolean
wake_cb(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

typedef gboolean (*Cond)(Fixture *fx, gpointer data);

/* runs the loop; fake time moves a step whenever the loop was idle for 20 ms of real time */
static gboolean
advance_until(Fixture *fx, Cond cond, gpointer data, gint64 max_fake)
{
	gint64 start = sfl_clock_monotonic_usec(fx->clock);
	gint64 deadline = g_get_monotonic_time() + 60 * SEC;

	while (!cond(fx, data)) {
		gboolean idle = FALSE;
		g_autoptr(GSource) tick = g_timeout_source_new(20);

		if (g_get_monotonic_time() > deadline ||
		    sfl_clock_monotonic_usec(fx->clock) - start > max_fake)
			return FALSE;
		g_source_set_callback(tick, wake_cb, &idle, NULL);
		g_source_attach(tick, NULL);
		/* cond may itself run the loop (a control call) and see the tick fire */
		while (!cond(fx, data) && !idle)
			g_main_context_iteration(NULL, TRUE);
		g_source_destroy(tick);
		if (idle)
			sfl_fake_clock_advance(fx->clock, STEP);
	}
	return TRUE;
}

static gboolean
never(Fixture *fx, gpointer data)
{
	return FALSE;
}

static gboolean
leads(Fixture *fx, gpointer data)
{
	Replica *r = data;
	return r->acquired > r->lost;
}

static gboolean
lost(Fixture *fx, gpointer data)
{
	Replica *r = data;
	return r->lost > 0;
}

static json_t *
sim_state(Fixture *fx)
{
	return sfl_test_sim_control(fx->loop, fx->base, "GET", "/control/state", NULL);
}

static json_t *
sim_writes(Fixture *fx)
{
	g_autoptr(json_t) state = sim_state(fx);
	return json_incref(json_object_get(state, "writes"));
}

static gboolean
writes_at_least(Fixture *fx, gpointer data)
{
	g_autoptr(json_t) writes = sim_writes(fx);
	return json_array_size(writes) >= GPOINTER_TO_UINT(data);
}

/* the precondition a write carried: "*" / "0" for create-only, else the version */
static const gchar *
write_condition(Fixture *fx, json_t *w)
{
	if (fx->gcs)
		return json_string_value(json_object_get(w, "ifGenerationMatch"));
	if (json_string_value(json_object_get(w, "ifNoneMatch")) != NULL)
		return json_string_value(json_object_get(w, "ifNoneMatch"));
	return json_string_value(json_object_get(w, "ifMatch"));
}

/* the live lease object's version and body */
static gchar *
lease_version(Fixture *fx, gchar **body)
{
	g_autoptr(json_t) state = sim_state(fx);
	json_t *obj = json_object_get(json_object_get(state, "objects"), "lease/" KEY);

	if (obj == NULL)
		return NULL;
	if (body != NULL)
		*body = g_strdup(json_string_value(json_object_get(obj, "body")));
	return g_strdup(json_string_value(json_object_get(obj, fx->gcs ? "generation" : "etag")));
}

/* @body stored at @key in the bucket behind the client's back (NULL deletes it) */
static void
put_object(Fixture *fx, const gchar *key, const gchar *body)
{
	g_autoptr(json_t) req = json_pack("{s:s, s:s, s:s?}", "bucket", "lease",
					  fx->gcs ? "name" : "key", key, "body", body);
	g_autofree gchar *text = json_dumps(req, 0);
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/object", text));
}

static void
put_lease(Fixture *fx, const gchar *json)
{
	put_object(fx, KEY, json);
}

static void
test_create_then_renew(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) writes = NULL;
	g_autofree gchar *first = NULL;
	g_autofree gchar *body = NULL;

	if (fx->base == NULL)
		return;
	replica_start(fx, &fx->a, "a");
	g_assert_true(advance_until(fx, leads, &fx->a, RENEW));
	g_assert_cmpuint(sfl_coordinator_get_epoch(fx->a.coord), ==, 1);
	first = lease_version(fx, &body);
	g_assert_nonnull(strstr(body, "\"holder\": \"a\""));
	g_assert_nonnull(strstr(body, "\"epoch\": 1"));
	/* the renewal is conditional on the version the claim produced */
	g_assert_true(advance_until(fx, writes_at_least, GUINT_TO_POINTER(2), 2 * RENEW));
	writes = sim_writes(fx);
	g_assert_cmpstr(write_condition(fx, json_array_get(writes, 0)), ==, fx->gcs ? "0" : "*");
	g_assert_cmpstr(write_condition(fx, json_array_get(writes, 1)), ==, first);
	g_assert_cmpint(json_integer_value(json_object_get(json_array_get(writes, 1), "status")),
			==, 200);
	g_clear_pointer(&body, g_free);
	g_free(lease_version(fx, &body));
	g_assert_nonnull(strstr(body, "\"epoch\": 1"));
	g_assert_cmpuint(fx->a.lost, ==, 0);
}

static void
test_renew_race_demotes(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) before = NULL;
	g_autoptr(json_t) after = NULL;

	if (fx->base == NULL)
		return;
	replica_start(fx, &fx->a, "a");
	g_assert_true(advance_until(fx, leads, &fx->a, RENEW));
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/race",
					 "{\"body\": \"{\\\"holder\\\": \\\"intruder\\\"}\"}"));
	before = sim_state(fx);
	g_assert_true(advance_until(fx, lost, &fx->a, 2 * RENEW));
	after = sim_state(fx);
	/* exactly the renewal's write (412), no read before or after it */
	g_assert_cmpint(json_integer_value(json_object_get(after, "requests")) -
				json_integer_value(json_object_get(before, "requests")),
			==, 1);
	g_assert_false(sfl_coordinator_is_leader(fx->a.coord));
	g_assert_true(warned("changed or vanished under us"));
}

static void
test_read_errors_never_write(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) writes = NULL;

	if (fx->base == NULL)
		return;
	put_lease(fx, "{\"holder\": \"dead\", \"expires_at\": \"2000-01-01T00:00:00+00:00\", "
		      "\"epoch\": 3}");
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/fault",
					 "{\"action\": \"status\", \"status\": 503, \"count\": "
					 "1000, \"methods\": [\"GET\"]}"));
	replica_start(fx, &fx->a, "a");
	/* three ttls of 503s: cannot tell, never claimable */
	g_assert_false(advance_until(fx, never, NULL, 3 * TTL));
	writes = sim_writes(fx);
	g_assert_cmpuint(json_array_size(writes), ==, 0);
	g_assert_cmpuint(fx->a.acquired, ==, 0);
	g_assert_true(warned("backing off without contesting"));
}

static gboolean
anyone_leads(Fixture *fx, gpointer data)
{
	return leads(fx, &fx->a) || leads(fx, &fx->b);
}

static void
test_two_standbys_one_winner(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) writes = NULL;
	g_autofree gchar *stale = NULL;
	guint conflicts = 0;
	guint landed = 0;
	json_t *w = NULL;
	gsize i = 0;

	if (fx->base == NULL)
		return;
	put_lease(fx, "{\"holder\": \"dead\", \"expires_at\": \"2000-01-01T00:00:00+00:00\", "
		      "\"epoch\": 3}");
	stale = lease_version(fx, NULL);
	g_assert_nonnull(stale);
	replica_start(fx, &fx->a, "a");
	replica_start(fx, &fx->b, "b");
	/* generous in fake time: the clock moves while requests are in flight */
	g_assert_true(advance_until(fx, anyone_leads, NULL, TTL + 2 * RENEW));
	/* let a racing claim come back too, and the winner renew once */
	g_assert_true(advance_until(fx, writes_at_least, GUINT_TO_POINTER(2), RENEW));
	writes = sim_writes(fx);
	/*
	 * Every claim of the stale lease is conditional on its version: exactly one lands. When
	 * the other replica read the lease in time to race, its claim is refused with 412; when
	 * its read came after the winner's write, it saw a fresh lease and never claimed.
	 */
	json_array_foreach (writes, i, w) {
		json_int_t status = json_integer_value(json_object_get(w, "status"));

		if (g_strcmp0(write_condition(fx, w), stale) != 0)
			continue;
		if (status == 412)
			conflicts++;
		else if (status == 200)
			landed++;
		else
			g_error("a claim of the stale lease answered %" G_GINT64_FORMAT,
				(gint64)status);
	}
	g_assert_cmpuint(landed, ==, 1);
	g_assert_cmpuint(conflicts, <=, 1);
	g_assert_cmpuint(fx->a.acquired + fx->b.acquired, ==, 1);
	g_assert_cmpuint(
		MAX(sfl_coordinator_get_epoch(fx->a.coord), sfl_coordinator_get_epoch(fx->b.coord)),
		==, 4);
}

/* the simulators answer two keys a page, so listing five exercises the continuation */
static void
fixture_setup_paged(Fixture *fx, gconstpointer data)
{
	const gchar *args[] = { "--page-size", "2", NULL };

	fx->gcs = g_strcmp0(data, "gcs") == 0;
	g_ptr_array_set_size(warnings, 0);
	fx->loop = sfl_curl_loop_new();
	fx->clock = sfl_fake_clock_new(g_get_real_time());
	fx->base = fx->gcs ? sfl_test_gcs_sim_start(args, &fx->proc)
			   : sfl_test_s3_sim_start(args, &fx->proc);
}

/* list by prefix: every page, only the prefix's keys, each with the version a put returned */
static void
test_list_pages(Fixture *fx, gconstpointer data)
{
	static const gchar *const keys[] = { "m/a.json", "m/b%20c.json", "m/d&<e>.json", "m/f.json",
					     "m/g.json" };
	g_autoptr(SflObjectClient) client = NULL;
	g_autoptr(GPtrArray) versions = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) listing = NULL;
	g_autoptr(GError) error = NULL;
	SflTestWaiter waiter = { 0 };
	g_autoptr(GBytes) body = g_bytes_new_static("{}", 2);
	g_autoptr(GBytes) other = g_bytes_new_static("{\"x\":1}", 7);

	if (fx->base == NULL)
		return;
	client = make_client(fx);
	for (guint i = 0; i <= G_N_ELEMENTS(keys); i++) {
		/* one key outside the prefix, which the listing leaves out */
		const gchar *key = i < G_N_ELEMENTS(keys) ? keys[i] : "n/outside.json";
		gchar *version;

		waiter = (SflTestWaiter){ 0 };
		sfl_object_client_put_async(client, key, i % 2 == 0 ? body : other,
					    SFL_OBJECT_WRITE_CREATE_ONLY, NULL, NULL,
					    sfl_test_waiter_cb, &waiter);
		sfl_test_wait_for(&waiter.done, 30);
		version = sfl_object_client_put_finish(client, waiter.result, &error);
		g_clear_object(&waiter.result);
		g_assert_no_error(error);
		g_ptr_array_add(versions, version);
	}
	waiter = (SflTestWaiter){ 0 };
	sfl_object_client_list_async(client, "m/", NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, 30);
	listing = sfl_object_client_list_finish(client, waiter.result, &error);
	g_clear_object(&waiter.result);
	g_assert_no_error(error);
	g_assert_cmpuint(listing->len, ==, G_N_ELEMENTS(keys));
	for (guint i = 0; i < listing->len; i++) {
		const SflObjectEntry *entry = listing->pdata[i];
		g_assert_cmpstr(entry->key, ==, keys[i]);
		g_assert_cmpstr(entry->version, ==, versions->pdata[i]);
	}
	g_clear_pointer(&listing, g_ptr_array_unref);
	/* an empty prefix's listing is empty, not an error */
	waiter = (SflTestWaiter){ 0 };
	sfl_object_client_list_async(client, "none/", NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, 30);
	listing = sfl_object_client_list_finish(client, waiter.result, &error);
	g_clear_object(&waiter.result);
	g_assert_no_error(error);
	g_assert_cmpuint(listing->len, ==, 0);
	sfl_object_client_close(client);
}

/* --- the membership records of a sharded group ------------------------------------------- */

#define MEMBERS "sf2loki/leader.json.members/"

static gboolean
member_publish(SflMemberStore *store, const gchar *holder, guint64 seq, GError **error)
{
	SflTestWaiter waiter = { 0 };
	gboolean ok;

	SFL_MEMBER_STORE_GET_CLASS(store)->publish_async(store, holder, seq, NULL,
							 sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, 30);
	ok = SFL_MEMBER_STORE_GET_CLASS(store)->publish_finish(store, waiter.result, error);
	g_clear_object(&waiter.result);
	return ok;
}

static gboolean
member_remove(SflMemberStore *store, const gchar *holder)
{
	SflTestWaiter waiter = { 0 };
	g_autoptr(GError) error = NULL;
	gboolean ok;

	SFL_MEMBER_STORE_GET_CLASS(store)->remove_async(store, holder, NULL, sfl_test_waiter_cb,
							&waiter);
	sfl_test_wait_for(&waiter.done, 30);
	ok = SFL_MEMBER_STORE_GET_CLASS(store)->remove_finish(store, waiter.result, &error);
	g_clear_object(&waiter.result);
	g_assert_no_error(error);
	return ok;
}

/* holder -> version of every listed record, or NULL with @error */
static GHashTable *
member_list(SflMemberStore *store, GError **error)
{
	SflTestWaiter waiter = { 0 };
	g_autoptr(GPtrArray) entries = NULL;
	GHashTable *out;

	SFL_MEMBER_STORE_GET_CLASS(store)->list_async(store, NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, 30);
	entries = SFL_MEMBER_STORE_GET_CLASS(store)->list_finish(store, waiter.result, error);
	g_clear_object(&waiter.result);
	if (entries == NULL)
		return NULL;
	out = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (guint i = 0; i < entries->len; i++) {
		const SflMemberEntry *e = entries->pdata[i];
		g_hash_table_insert(out, g_strdup(e->holder), g_strdup(e->version));
	}
	return out;
}

/*
 * The object member store against the simulators (two keys a page): records named by their
 * escaped holders, versions that change with every renewal, a restart of a holder taking its
 * record over, other keys under the prefix left out, a dead record removed only while it is
 * the version the listing saw, and a failed listing an error (never a partial member list).
 */
static void
test_member_store(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflObjectClient) client_a = NULL;
	g_autoptr(SflObjectClient) client_b = NULL;
	g_autoptr(SflMemberStore) a = NULL;
	g_autoptr(SflMemberStore) b = NULL;
	g_autoptr(SflMemberStore) a2 = NULL;
	g_autoptr(GHashTable) first = NULL;
	g_autoptr(GHashTable) second = NULL;
	g_autoptr(GHashTable) third = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *b_key = sfl_object_member_key(MEMBERS, "host:1/x");
	g_autoptr(json_t) state = NULL;

	if (fx->base == NULL)
		return;
	client_a = make_client(fx);
	client_b = make_client(fx);
	a = sfl_object_member_store_new(client_a, MEMBERS);
	b = sfl_object_member_store_new(client_b, MEMBERS);
	g_assert_cmpstr(b_key, ==, MEMBERS "host%3A1%2Fx.json");

	g_assert_true(member_publish(a, "replica-a", 1, &error));
	g_assert_no_error(error);
	g_assert_true(member_publish(b, "host:1/x", 1, &error));
	g_assert_no_error(error);
	/* not member records: another suffix, and a folder below the members' */
	put_object(fx, MEMBERS "notes.txt", "{}");
	put_object(fx, MEMBERS "sub/replica-z.json", "{\"holder\": \"z\", \"seq\": 1}");
	put_object(fx, MEMBERS "c.json", "{\"holder\": \"c\", \"seq\": 1}");
	first = member_list(a, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(g_hash_table_size(first), ==, 3);
	g_assert_nonnull(g_hash_table_lookup(first, "replica-a"));
	g_assert_nonnull(g_hash_table_lookup(first, "host:1/x"));
	g_assert_nonnull(g_hash_table_lookup(first, "c"));
	/* the record says who and which renewal */
	state = sim_state(fx);
	{
		g_autofree gchar *name = g_strconcat("lease/", b_key, NULL);
		json_t *obj = json_object_get(json_object_get(state, "objects"), name);
		g_autoptr(json_t) doc =
			json_loads(json_string_value(json_object_get(obj, "body")), 0, NULL);
		g_assert_cmpstr(json_string_value(json_object_get(doc, "holder")), ==, "host:1/x");
		g_assert_cmpint(json_integer_value(json_object_get(doc, "seq")), ==, 1);
	}

	/* a renewal changes that record's version only */
	g_assert_true(member_publish(b, "host:1/x", 2, &error));
	g_assert_no_error(error);
	second = member_list(a, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(g_hash_table_lookup(second, "replica-a"), ==,
			g_hash_table_lookup(first, "replica-a"));
	g_assert_cmpstr(g_hash_table_lookup(second, "host:1/x"), !=,
			g_hash_table_lookup(first, "host:1/x"));

	/* replica-a restarts (a new store that knows no version): it takes its record over,
	 * and the old process's next renewal, on a version that is not current, recovers too */
	{
		g_autoptr(SflObjectClient) client = make_client(fx);
		a2 = sfl_object_member_store_new(client, MEMBERS);
	}
	g_assert_true(member_publish(a2, "replica-a", 1, &error));
	g_assert_no_error(error);
	g_assert_true(member_publish(a, "replica-a", 2, &error));
	g_assert_no_error(error);

	/* a dead-record cleanup races a renewal: the renewed record stays */
	g_clear_pointer(&third, g_hash_table_unref);
	third = member_list(a, &error);
	g_assert_no_error(error);
	g_assert_true(member_publish(b, "host:1/x", 3, &error));
	g_assert_no_error(error);
	g_assert_true(member_remove(a, "host:1/x"));
	g_clear_pointer(&third, g_hash_table_unref);
	third = member_list(a, &error);
	g_assert_no_error(error);
	g_assert_true(g_hash_table_contains(third, "host:1/x"));
	/* unchanged since the listing: removed; removing it again is not a failure */
	g_assert_true(member_remove(a, "host:1/x"));
	g_assert_true(member_remove(a, "host:1/x"));
	g_assert_true(member_remove(a, "replica-a"));
	g_clear_pointer(&third, g_hash_table_unref);
	third = member_list(a, &error);
	g_assert_no_error(error);
	g_assert_false(g_hash_table_contains(third, "host:1/x"));
	g_assert_false(g_hash_table_contains(third, "replica-a"));
	g_assert_true(g_hash_table_contains(third, "c"));

	/* a listing that fails cannot tell: an error, never a shorter member list */
	json_decref(sfl_test_sim_control(
		fx->loop, fx->base, "POST", "/control/fault",
		"{\"action\": \"status\", \"status\": 503, \"count\": 1, \"methods\": "
		"[\"GET\"]}"));
	g_clear_pointer(&third, g_hash_table_unref);
	third = member_list(a, &error);
	g_assert_null(third);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "membership records"));
	g_clear_error(&error);
	sfl_object_client_close(client_a);
	sfl_object_client_close(client_b);
}

int
main(int argc, char **argv)
{
	const gchar *kinds[] = { "s3", "gcs" };

	g_test_init(&argc, &argv, NULL);
	/* the coordinators warn on purpose here: keep the warnings, do not abort on them */
	warnings = sfl_test_warnings_record(TRUE);
	for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
		g_autofree gchar *a =
			g_strdup_printf("/sfl/object-lease-sim/%s/create-then-renew", kinds[i]);
		g_autofree gchar *b =
			g_strdup_printf("/sfl/object-lease-sim/%s/renew-race-demotes", kinds[i]);
		g_autofree gchar *c = g_strdup_printf(
			"/sfl/object-lease-sim/%s/read-errors-never-write", kinds[i]);
		g_autofree gchar *d = g_strdup_printf(
			"/sfl/object-lease-sim/%s/two-standbys-one-winner", kinds[i]);
		g_autofree gchar *e =
			g_strdup_printf("/sfl/object-lease-sim/%s/list-pages", kinds[i]);
		g_autofree gchar *f =
			g_strdup_printf("/sfl/object-lease-sim/%s/member-store", kinds[i]);

		g_test_add(a, Fixture, kinds[i], fixture_setup, test_create_then_renew,
			   fixture_teardown);
		g_test_add(b, Fixture, kinds[i], fixture_setup, test_renew_race_demotes,
			   fixture_teardown);
		g_test_add(c, Fixture, kinds[i], fixture_setup, test_read_errors_never_write,
			   fixture_teardown);
		g_test_add(d, Fixture, kinds[i], fixture_setup, test_two_standbys_one_winner,
			   fixture_teardown);
		g_test_add(e, Fixture, kinds[i], fixture_setup_paged, test_list_pages,
			   fixture_teardown);
		g_test_add(f, Fixture, kinds[i], fixture_setup_paged, test_member_store,
			   fixture_teardown);
	}
	return g_test_run();
}
