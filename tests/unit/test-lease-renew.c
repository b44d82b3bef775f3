/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestLeaseRenew"

#include "config.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-lease-common.h"
#include "sfl-test-coordinator.h"

/*
 * The renew-failure policy the file lease and the compare-and-swap engine share, on a fake
 * clock: which failures are a definite loss, how long a leader keeps leading on the others,
 * the safety margin, and the messages each verdict logs.
 */

#define SEC	 G_USEC_PER_SEC
#define LIFETIME (30 * SEC)
#define DOMAIN	 "SflTestLeaseRenewPolicy"

static GPtrArray *warnings; /* (element-type utf8) */

typedef struct {
	SflClock *clock;
	SflLeaseRenewPolicy policy;
} Fixture;

static void
fixture_setup(Fixture *f, gconstpointer user_data)
{
	f->clock = sfl_fake_clock_new((gint64)1796007600 * SEC);
	f->policy = (SflLeaseRenewPolicy){
		.clock = f->clock,
		.log_domain = DOMAIN,
		.what = "lease fake://bucket/leader.json",
		.lifetime_name = "ttl",
		.lifetime_usec = LIFETIME,
		.margin_usec = 0,
		.conditional = TRUE,
		.lost_how = "changed or vanished under us",
	};
	g_ptr_array_set_size(warnings, 0);
}

static void
fixture_teardown(Fixture *f, gconstpointer user_data)
{
	sfl_clock_unref(f->clock);
}

/* the last confirmation was @ago before now */
static gint64
confirmed_ago(Fixture *f, gint64 ago)
{
	return sfl_clock_monotonic_usec(f->clock) - ago;
}

static const gchar *
verdict_name(SflLeaseRenewVerdict verdict)
{
	switch (verdict) {
	case SFL_LEASE_RENEW_KEEP:
		return "keep";
	case SFL_LEASE_RENEW_LOST:
		return "lost";
	case SFL_LEASE_RENEW_EXPIRED:
		return "expired";
	default:
		return "?";
	}
}

typedef struct {
	const gchar *name;
	gboolean conditional;
	gint code; /* SflError code of the failed write; -1: no error (a read, a late timer) */
	gint64 margin_usec;
	gint64 ago_usec; /* since the last confirmation */
	SflLeaseRenewVerdict verdict;
} JudgeCase;

static const JudgeCase judge_cases[] = {
	{ "transient just after a renewal", TRUE, SFL_ERROR_TRANSIENT, 0, 1, SFL_LEASE_RENEW_KEEP },
	{ "transient a microsecond short of the ttl", TRUE, SFL_ERROR_TRANSIENT, 0, LIFETIME - 1,
	  SFL_LEASE_RENEW_KEEP },
	{ "transient at the ttl", TRUE, SFL_ERROR_TRANSIENT, 0, LIFETIME, SFL_LEASE_RENEW_EXPIRED },
	{ "transient past the ttl", TRUE, SFL_ERROR_TRANSIENT, 0, 2 * LIFETIME,
	  SFL_LEASE_RENEW_EXPIRED },
	{ "throttled is transient", TRUE, SFL_ERROR_THROTTLED, 0, 10 * SEC, SFL_LEASE_RENEW_KEEP },
	{ "auth is transient", TRUE, SFL_ERROR_AUTH, 0, 10 * SEC, SFL_LEASE_RENEW_KEEP },
	{ "conflict is a loss at once", TRUE, SFL_ERROR_CONFLICT, 0, 1, SFL_LEASE_RENEW_LOST },
	{ "conflict past the ttl is still a loss", TRUE, SFL_ERROR_CONFLICT, 0, 2 * LIFETIME,
	  SFL_LEASE_RENEW_LOST },
	{ "a vanished document is a loss", TRUE, SFL_ERROR_NOT_FOUND, 0, 1, SFL_LEASE_RENEW_LOST },
	{ "without conditional writes a conflict cannot tell", FALSE, SFL_ERROR_CONFLICT, 0, 1,
	  SFL_LEASE_RENEW_KEEP },
	{ "without conditional writes a missing file cannot tell", FALSE, SFL_ERROR_NOT_FOUND, 0,
	  LIFETIME, SFL_LEASE_RENEW_EXPIRED },
	{ "no error within the ttl", TRUE, -1, 0, LIFETIME - 1, SFL_LEASE_RENEW_KEEP },
	{ "no error at the ttl", TRUE, -1, 0, LIFETIME, SFL_LEASE_RENEW_EXPIRED },
	{ "the margin ends the term early", TRUE, SFL_ERROR_TRANSIENT, 5 * SEC, 25 * SEC,
	  SFL_LEASE_RENEW_EXPIRED },
	{ "just inside the margin", TRUE, SFL_ERROR_TRANSIENT, 5 * SEC, 25 * SEC - 1,
	  SFL_LEASE_RENEW_KEEP },
};

static void
test_judge(Fixture *f, gconstpointer user_data)
{
	for (gsize i = 0; i < G_N_ELEMENTS(judge_cases); i++) {
		const JudgeCase *c = &judge_cases[i];
		g_autoptr(GError) error = NULL;
		SflLeaseRenewVerdict verdict;

		f->policy.conditional = c->conditional;
		f->policy.margin_usec = c->margin_usec;
		if (c->code >= 0)
			error = g_error_new(SFL_ERROR, c->code, "injected");
		/* the clock moves on between cases: only the distance counts */
		sfl_fake_clock_advance(f->clock, 7 * SEC);
		verdict = sfl_lease_renew_judge(&f->policy, error, confirmed_ago(f, c->ago_usec));
		g_test_message("%s: %s", c->name, verdict_name(verdict));
		g_assert_cmpstr(verdict_name(verdict), ==, verdict_name(c->verdict));
		/* the fence and the release ask the same question, without an error */
		g_assert_cmpint(
			sfl_lease_renew_fresh(&f->policy, confirmed_ago(f, c->ago_usec)), ==,
			sfl_lease_renew_judge(&f->policy, NULL, confirmed_ago(f, c->ago_usec)) ==
				SFL_LEASE_RENEW_KEEP);
	}
}

/* a leader renews every 10 s and every write fails: it keeps leading until the ttl is up */
static void
test_failing_renewals_on_the_clock(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GError) error = g_error_new(SFL_ERROR, SFL_ERROR_TRANSIENT, "answered 503");
	gint64 last_ok = sfl_clock_monotonic_usec(f->clock);
	guint kept = 0;

	for (;;) {
		sfl_fake_clock_advance(f->clock, 10 * SEC);
		if (!sfl_lease_renew_write_failed(&f->policy, error, last_ok))
			break;
		kept++;
	}
	g_assert_cmpuint(kept, ==, 2);
	g_assert_cmpint(sfl_clock_monotonic_usec(f->clock) - last_ok, ==, LIFETIME);
	g_assert_cmpuint(warnings->len, ==, 3);
	g_assert_cmpstr(g_ptr_array_index(warnings, 0), ==,
			"cannot renew the lease fake://bucket/leader.json (answered 503); still "
			"leading, last renewed 10.0 s ago (ttl 30.0 s)");
	g_assert_cmpstr(g_ptr_array_index(warnings, 2), ==,
			"cannot renew the lease fake://bucket/leader.json (answered 503) and the "
			"last renewal was 30.0 s ago, not within its ttl of 30.0 s: giving up "
			"leadership");
}

static void
test_messages(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GError) conflict = g_error_new(SFL_ERROR, SFL_ERROR_CONFLICT, "answered 412");
	g_autoptr(GError) unreadable = g_error_new(SFL_ERROR, SFL_ERROR_TRANSIENT, "timed out");
	gint64 now;

	sfl_fake_clock_advance(f->clock, 100 * SEC);
	now = sfl_clock_monotonic_usec(f->clock);
	g_assert_false(sfl_lease_renew_write_failed(&f->policy, conflict, now));
	g_assert_cmpstr(g_ptr_array_index(warnings, 0), ==,
			"the lease fake://bucket/leader.json changed or vanished under us "
			"(answered 412): giving up leadership");

	/* a read that cannot tell: silent while within the ttl (the caller says what it does) */
	g_assert_true(sfl_lease_renew_read_failed(&f->policy, unreadable, now - 29 * SEC));
	g_assert_cmpuint(warnings->len, ==, 1);
	g_assert_false(sfl_lease_renew_read_failed(&f->policy, unreadable, now - 30 * SEC));
	g_assert_cmpstr(g_ptr_array_index(warnings, 1), ==,
			"cannot read the lease fake://bucket/leader.json (timed out) and it was "
			"last confirmed ours 30.0 s ago, not within its ttl of 30.0 s: giving up "
			"leadership without writing");

	/* a read's error is never a loss by itself, whatever its code */
	g_assert_true(sfl_lease_renew_read_failed(&f->policy, conflict, now));

	g_assert_true(sfl_lease_renew_awake(&f->policy, now - 29 * SEC));
	g_assert_false(sfl_lease_renew_awake(&f->policy, now - 40 * SEC));
	g_assert_cmpuint(warnings->len, ==, 3);
	g_assert_cmpstr(g_ptr_array_index(warnings, 2), ==,
			"woke up 40.0 s after the last renewal of the lease "
			"fake://bucket/leader.json, not within its ttl of 30.0 s (was this process "
			"stalled?): giving up leadership without writing");
	/* three surrenders, each said once */
	g_assert_cmpuint(sfl_test_warnings_count("giving up leadership"), ==, 3);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	warnings = sfl_test_warnings_record(TRUE);
#define ADD(name, func)                                                                            \
	g_test_add("/sfl/lease-renew/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("judge", test_judge);
	ADD("failing-renewals-on-the-clock", test_failing_renewals_on_the_clock);
	ADD("messages", test_messages);
	return g_test_run();
}
