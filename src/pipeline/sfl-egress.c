/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflEgress"

#include "config.h"

#include "sfl-egress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sfl-autocleanups.h"
#include "sfl-gsource.h"

/*
 * Each admission is a waiter with its own timer on the governor's clock. A waiter re-runs the
 * whole admission (budget, then rates) whenever its timer fires, so a waiter paused on the
 * budget observes midnight by itself: the rollover is guarded by the day it rolls to, and
 * whichever waiter sees the new day first rolls it (SFL-0004: the original had one waiter
 * roll over and the other sleep another full day).
 */

#define SFL_EGRESS_DAY_USEC	  ((gint64)86400 * G_USEC_PER_SEC)
#define SFL_EGRESS_DROP_LOG_USEC  ((gint64)60 * G_USEC_PER_SEC)
#define SFL_EGRESS_HIGH_WATER_PCT 80

typedef struct {
	SflEgress *egress; /* borrowed: the task holds a reference */
	GTask *task;
	guint64 lines;
	guint64 bytes;
	gboolean no_pause;
	gboolean paused;
	GSource *timer;
	GCancellable *cancellable;
	gulong cancel_id;
	GList *link; /* in the governor's waiters */
} SflEgressWaiter;

struct _SflEgress {
	GObject parent_instance;
	SflLokiEgressConfig config;
	SflClock *clock;
	GMainContext *context;
	/* token buckets, refilled lazily from the monotonic clock */
	gdouble line_tokens;
	gdouble byte_tokens;
	gint64 refilled_at;
	/* the daily budget: the UTC day (days since the epoch) that @used counts */
	gint64 day;
	guint64 used;
	gboolean loading;
	guint load_serial; /* a newer run's load supersedes an older one still in flight */
	guint n_paused;
	gint64 paused_logged_day;
	gint64 high_logged_day;
	gint64 drop_logged_at; /* monotonic; 0: never */
	guint64 drops_unlogged;
	GQueue waiters; /* SflEgressWaiter */
	SflSeries *used_gauge;
	SflSeries *paused_gauge;
};

G_DEFINE_TYPE(SflEgress, sfl_egress, G_TYPE_OBJECT)

static void sfl_egress_waiter_step(SflEgressWaiter *w);

/* --- days ----------------------------------------------------------------------------------- */

static gint64
sfl_egress_day_of(gint64 wall_usec)
{
	gint64 day = wall_usec / SFL_EGRESS_DAY_USEC;

	if (wall_usec < 0 && wall_usec % SFL_EGRESS_DAY_USEC != 0)
		day--;
	return day;
}

static void
sfl_egress_format_day(gint64 day, gchar out[11])
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(day * 86400);
	g_autofree gchar *text = dt != NULL ? g_date_time_format(dt, "%Y-%m-%d") : NULL;

	g_strlcpy(out, text != NULL ? text : "", 11);
}

static gint64
sfl_egress_today(SflEgress *self)
{
	return sfl_egress_day_of(sfl_clock_wall_usec(self->clock));
}

static void
sfl_egress_publish(SflEgress *self)
{
	if (self->used_gauge != NULL)
		sfl_series_set(self->used_gauge, (gdouble)self->used);
	if (self->paused_gauge != NULL)
		sfl_series_set(self->paused_gauge, self->n_paused > 0 ? 1 : 0);
}

/* a new UTC day starts with nothing used; the once-per-day latches compare days */
static void
sfl_egress_roll(SflEgress *self)
{
	gint64 today = sfl_egress_today(self);

	if (today == self->day)
		return;
	if (self->used > 0)
		g_message("egress: new UTC day, the daily byte budget starts over");
	self->day = today;
	self->used = 0;
	sfl_egress_publish(self);
}

/* --- waiters -------------------------------------------------------------------------------- */

static void
sfl_egress_waiter_set_paused(SflEgressWaiter *w, gboolean paused)
{
	SflEgress *self = w->egress;

	if (w->paused == paused)
		return;
	w->paused = paused;
	if (paused)
		self->n_paused++;
	else
		self->n_paused--;
	if (self->n_paused == (paused ? 1u : 0u))
		sfl_egress_publish(self);
}

/* completes @w; the callback may run at once and admit again, so @w is gone before it does */
static void
sfl_egress_waiter_finish(SflEgressWaiter *w, SflEgressVerdict verdict, GError *error)
{
	SflEgress *self = w->egress;
	g_autoptr(GTask) task = g_steal_pointer(&w->task);

	sfl_clear_source(&w->timer);
	if (w->cancel_id != 0)
		g_cancellable_disconnect(w->cancellable, w->cancel_id);
	g_clear_object(&w->cancellable);
	sfl_egress_waiter_set_paused(w, FALSE);
	g_queue_delete_link(&self->waiters, w->link);
	g_free(w);
	if (error != NULL)
		g_task_return_error(task, error);
	else
		g_task_return_int(task, verdict);
}

static void
sfl_egress_waiter_timer_cb(gpointer user_data)
{
	sfl_egress_waiter_step(user_data);
}

static void
sfl_egress_waiter_arm(SflEgressWaiter *w, gint64 delay_usec)
{
	sfl_clock_once(w->egress->clock, &w->timer, MAX(delay_usec, 0), NULL,
		       sfl_egress_waiter_timer_cb, w, w->egress->context);
}

/* may run inside g_cancellable_cancel(): only arm a timer, the step completes from the loop */
static void
sfl_egress_waiter_cancelled_cb(GCancellable *cancellable, gpointer user_data)
{
	sfl_egress_waiter_arm(user_data, 0);
}

/* --- rates ---------------------------------------------------------------------------------- */

static void
sfl_egress_refill(SflEgress *self)
{
	gint64 now = sfl_clock_monotonic_usec(self->clock);
	gdouble elapsed = (gdouble)(now - self->refilled_at) / G_USEC_PER_SEC;
	gdouble lps = self->config.max_lines_per_second;
	gdouble bps = self->config.max_bytes_per_second;

	if (elapsed > 0) {
		if (lps > 0)
			self->line_tokens = MIN(lps, self->line_tokens + lps * elapsed);
		if (bps > 0)
			self->byte_tokens = MIN(bps, self->byte_tokens + bps * elapsed);
	}
	self->refilled_at = now;
}

/* how long until one bucket holds min(@amount, capacity); capacity is one second of @rate */
static gint64
sfl_egress_shortfall_usec(gdouble rate, gdouble tokens, guint64 amount)
{
	gdouble need;

	if (rate <= 0)
		return 0;
	need = MIN((gdouble)amount, rate);
	/* float refills land a hair short of an exact wait: that is not worth another timer */
	if (need - tokens <= 1e-9 * MAX(need, 1.0))
		return 0;
	return MAX((gint64)ceil((need - tokens) / rate * G_USEC_PER_SEC), 1);
}

/* --- admission ------------------------------------------------------------------------------ */

/* drop mode: one WARNING a minute, with the batches dropped since the last one */
static void
sfl_egress_log_drop(SflEgress *self, SflEgressWaiter *w)
{
	gint64 now = sfl_clock_monotonic_usec(self->clock);

	self->drops_unlogged++;
	if (self->drop_logged_at != 0 && now - self->drop_logged_at < SFL_EGRESS_DROP_LOG_USEC)
		return;
	g_warning("egress: a batch of %" G_GUINT64_FORMAT
		  " bytes does not fit in the daily byte budget (%" G_GUINT64_FORMAT
		  " of %" G_GINT64_FORMAT " bytes used today); dropping batches that do not fit "
		  "until midnight UTC (budget_action drop; %" G_GUINT64_FORMAT
		  " batch(es) dropped since the last warning)",
		  w->bytes, self->used, self->config.daily_byte_budget, self->drops_unlogged);
	self->drop_logged_at = now;
	self->drops_unlogged = 0;
}

static void
sfl_egress_pause(SflEgress *self, SflEgressWaiter *w)
{
	gint64 wall = sfl_clock_wall_usec(self->clock);
	gint64 midnight = (sfl_egress_day_of(wall) + 1) * SFL_EGRESS_DAY_USEC;

	sfl_egress_waiter_set_paused(w, TRUE);
	if (self->paused_logged_day != self->day) {
		gchar until[11];

		sfl_egress_format_day(self->day + 1, until);
		self->paused_logged_day = self->day;
		/* an operator must hear about this: the data stops until tomorrow (a batch
		 * larger than the whole budget never fits: the message shows its size) */
		g_critical("egress: a batch of %" G_GUINT64_FORMAT
			   " bytes does not fit in the daily byte budget (%" G_GUINT64_FORMAT
			   " of %" G_GINT64_FORMAT " bytes used today); pushes paused until %s "
			   "00:00 UTC",
			   w->bytes, self->used, self->config.daily_byte_budget, until);
	}
	/* re-checked on waking: a wall clock stepped back just sleeps again */
	sfl_egress_waiter_arm(w, midnight - wall);
}

static void
sfl_egress_waiter_step(SflEgressWaiter *w)
{
	SflEgress *self = w->egress;
	gint64 wait = 0;

	if (g_cancellable_is_cancelled(w->cancellable)) {
		sfl_egress_waiter_finish(w, SFL_EGRESS_ADMITTED,
					 g_error_new_literal(G_IO_ERROR, G_IO_ERROR_CANCELLED,
							     "admission cancelled"));
		return;
	}
	/* woken again once today's used bytes are known */
	if (self->loading)
		return;
	if (self->config.daily_byte_budget > 0) {
		sfl_egress_roll(self);
		if (self->used + w->bytes > (guint64)self->config.daily_byte_budget) {
			if (self->config.budget_action == SFL_BUDGET_ACTION_DROP) {
				sfl_egress_log_drop(self, w);
				sfl_egress_waiter_finish(w, SFL_EGRESS_DROP, NULL);
				return;
			}
			if (w->no_pause) {
				sfl_egress_waiter_finish(w, SFL_EGRESS_PAUSED, NULL);
				return;
			}
			sfl_egress_pause(self, w);
			return;
		}
		sfl_egress_waiter_set_paused(w, FALSE);
	}
	sfl_egress_refill(self);
	wait = MAX(sfl_egress_shortfall_usec(self->config.max_lines_per_second, self->line_tokens,
					     w->lines),
		   sfl_egress_shortfall_usec(self->config.max_bytes_per_second, self->byte_tokens,
					     w->bytes));
	if (wait > 0) {
		sfl_egress_waiter_arm(w, wait);
		return;
	}
	/* the full amounts: a batch over capacity leaves a debt that slows the next ones */
	if (self->config.max_lines_per_second > 0)
		self->line_tokens -= (gdouble)w->lines;
	if (self->config.max_bytes_per_second > 0)
		self->byte_tokens -= (gdouble)w->bytes;
	sfl_egress_waiter_finish(w, SFL_EGRESS_ADMITTED, NULL);
}

/* --- loading today's count ------------------------------------------------------------------ */

typedef struct {
	SflEgress *egress;
	guint serial;
} SflEgressLoad;

/* {"date": "YYYY-MM-DD", "bytes": N} with N >= 0 */
static gboolean
sfl_egress_parse(const gchar *value, gchar date[11], guint64 *bytes)
{
	g_autoptr(json_t) root = json_loads(value, JSON_REJECT_DUPLICATES, NULL);
	json_t *jdate = NULL;
	json_t *jbytes = NULL;
	const gchar *text = NULL;
	gint year = 0;
	gint month = 0;
	gint mday = 0;

	if (root == NULL || !json_is_object(root))
		return FALSE;
	jdate = json_object_get(root, "date");
	jbytes = json_object_get(root, "bytes");
	if (!json_is_string(jdate) || !json_is_integer(jbytes) || json_integer_value(jbytes) < 0)
		return FALSE;
	text = json_string_value(jdate);
	if (strlen(text) != 10 || sscanf(text, "%4d-%2d-%2d", &year, &month, &mday) != 3 ||
	    !g_date_valid_dmy((GDateDay)mday, (GDateMonth)month, (GDateYear)year))
		return FALSE;
	g_strlcpy(date, text, 11);
	*bytes = (guint64)json_integer_value(jbytes);
	return TRUE;
}

static void
sfl_egress_loaded_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflEgressLoad *op = user_data;
	g_autoptr(SflEgress) self = op->egress;
	guint serial = op->serial;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *value = NULL;
	gchar today_text[11];
	gchar date[11] = { 0 };
	guint64 bytes = 0;

	g_free(op);
	value = sfl_checkpoint_store_load_finish(SFL_CHECKPOINT_STORE(source), result, &error);
	if (serial != self->load_serial)
		return;
	self->loading = FALSE;
	self->day = sfl_egress_today(self);
	self->used = 0;
	sfl_egress_format_day(self->day, today_text);
	if (error != NULL) {
		g_warning("egress: cannot read %s (%s); counting today's bytes from 0",
			  SFL_EGRESS_BUDGET_KEY, error->message);
	} else if (value != NULL && !sfl_egress_parse(value, date, &bytes)) {
		g_warning("egress: the stored %s is not {\"date\": \"YYYY-MM-DD\", \"bytes\": N}; "
			  "counting today's bytes from 0",
			  SFL_EGRESS_BUDGET_KEY);
	} else if (value != NULL && g_str_equal(date, today_text)) {
		self->used = bytes;
	}
	g_debug("egress: %" G_GUINT64_FORMAT " bytes used on %s", self->used, today_text);
	sfl_egress_publish(self);
	/* every waiter re-runs its admission from the loop, with the count known */
	for (GList *l = self->waiters.head; l != NULL; l = l->next)
		sfl_egress_waiter_arm(l->data, 0);
}

/* --- the object ----------------------------------------------------------------------------- */

static void
sfl_egress_finalize(GObject *object)
{
	SflEgress *self = SFL_EGRESS(object);

	/* every waiter's task holds a reference: none can be left */
	g_warn_if_fail(g_queue_is_empty(&self->waiters));
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_clear_pointer(&self->context, g_main_context_unref);
	G_OBJECT_CLASS(sfl_egress_parent_class)->finalize(object);
}

static void
sfl_egress_class_init(SflEgressClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_egress_finalize;
}

static void
sfl_egress_init(SflEgress *self)
{
	g_queue_init(&self->waiters);
	self->context = g_main_context_ref_thread_default();
	self->paused_logged_day = G_MININT64;
	self->high_logged_day = G_MININT64;
}

/**
 * sfl_egress_config_is_active:
 * @config: the sink.loki.egress section
 *
 * Returns: %TRUE when a rate cap or the daily budget is set
 */
gboolean
sfl_egress_config_is_active(const SflLokiEgressConfig *config)
{
	g_return_val_if_fail(config != NULL, FALSE);
	return config->max_lines_per_second > 0 || config->max_bytes_per_second > 0 ||
	       config->daily_byte_budget > 0;
}

/**
 * sfl_egress_new:
 * @config: the limits (copied); at least one set
 * @clock: (transfer none): the clocks and timers
 *
 * Returns: (transfer full): a governor with full buckets and nothing used today
 */
SflEgress *
sfl_egress_new(const SflLokiEgressConfig *config, SflClock *clock)
{
	SflEgress *self;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(clock != NULL, NULL);
	self = g_object_new(SFL_TYPE_EGRESS, NULL);
	self->config = *config;
	self->clock = sfl_clock_ref(clock);
	self->line_tokens = MAX(config->max_lines_per_second, 0);
	self->byte_tokens = MAX(config->max_bytes_per_second, 0);
	self->refilled_at = sfl_clock_monotonic_usec(clock);
	self->day = sfl_egress_today(self);
	return self;
}

/**
 * sfl_egress_register_metrics:
 * @metrics: the registry
 * @used: (out) (optional) (transfer none): sf2loki_egress_budget_used_bytes
 * @paused: (out) (optional) (transfer none): sf2loki_egress_paused
 *
 * Registers the two gauges (0 until a governor sets them), so they are exported whether or
 * not a governor runs.
 */
void
sfl_egress_register_metrics(SflMetrics *metrics, SflSeries **used, SflSeries **paused)
{
	SflSeries *u = NULL;
	SflSeries *p = NULL;

	g_return_if_fail(metrics != NULL);
	u = sfl_metric_family_series(sfl_metrics_gauge(metrics, "sf2loki_egress_budget_used_bytes",
						       "Bytes counted against today's (UTC) "
						       "sink.loki.egress.daily_byte_budget.",
						       NULL),
				     NULL);
	p = sfl_metric_family_series(
		sfl_metrics_gauge(metrics, "sf2loki_egress_paused",
				  "1 while pushes wait for midnight UTC: the daily byte budget "
				  "is spent (budget_action pause).",
				  NULL),
		NULL);
	if (used != NULL)
		*used = u;
	if (paused != NULL)
		*paused = p;
}

/**
 * sfl_egress_set_metrics:
 * @self: a governor
 * @metrics: (nullable): the registry
 */
void
sfl_egress_set_metrics(SflEgress *self, SflMetrics *metrics)
{
	g_return_if_fail(SFL_IS_EGRESS(self));
	self->used_gauge = NULL;
	self->paused_gauge = NULL;
	if (metrics == NULL)
		return;
	sfl_egress_register_metrics(metrics, &self->used_gauge, &self->paused_gauge);
	sfl_egress_publish(self);
}

/**
 * sfl_egress_begin:
 * @self: a governor
 * @store: (transfer none): where SFL_EGRESS_BUDGET_KEY lives
 *
 * A pipeline run starts: with a daily budget, reads today's used bytes from @store (another
 * day's count, or a value that does not parse, counts as 0). Admissions wait for the read.
 */
void
sfl_egress_begin(SflEgress *self, SflCheckpointStore *store)
{
	SflEgressLoad *op;

	g_return_if_fail(SFL_IS_EGRESS(self));
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(store));
	if (self->config.daily_byte_budget <= 0)
		return;
	self->loading = TRUE;
	op = g_new0(SflEgressLoad, 1);
	op->egress = g_object_ref(self);
	op->serial = ++self->load_serial;
	sfl_checkpoint_store_load_async(store, SFL_EGRESS_BUDGET_KEY, NULL, sfl_egress_loaded_cb,
					op);
}

/**
 * sfl_egress_admit_async:
 * @self: a governor
 * @lines: the batch's real entries
 * @bytes: their line bytes (UTF-8, before compression)
 * @flags: %SFL_EGRESS_ADMIT_NO_PAUSE when the caller is stopping
 * @cancellable: (nullable): ends the wait with %G_IO_ERROR_CANCELLED
 * @callback: called once the batch may go, must be dropped, or the wait was cancelled
 * @user_data: (nullable): for @callback
 */
void
sfl_egress_admit_async(SflEgress *self, guint64 lines, guint64 bytes, SflEgressAdmitFlags flags,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	SflEgressWaiter *w;

	g_return_if_fail(SFL_IS_EGRESS(self));
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));
	w = g_new0(SflEgressWaiter, 1);
	w->egress = self;
	w->task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(w->task, sfl_egress_admit_async);
	w->lines = lines;
	w->bytes = bytes;
	w->no_pause = (flags & SFL_EGRESS_ADMIT_NO_PAUSE) != 0;
	g_queue_push_tail(&self->waiters, w);
	w->link = self->waiters.tail;
	if (cancellable != NULL) {
		w->cancellable = g_object_ref(cancellable);
		if (!g_cancellable_is_cancelled(cancellable))
			w->cancel_id = g_cancellable_connect(
				cancellable, G_CALLBACK(sfl_egress_waiter_cancelled_cb), w, NULL);
	}
	sfl_egress_waiter_step(w);
}

/**
 * sfl_egress_admit_finish:
 * @self: a governor
 * @result: the result
 * @verdict: (out): what to do with the batch
 * @error: (nullable): return location for a #GError
 *
 * Returns: %TRUE with @verdict set; %FALSE when the wait was cancelled
 */
gboolean
sfl_egress_admit_finish(SflEgress *self, GAsyncResult *result, SflEgressVerdict *verdict,
			GError **error)
{
	gssize value;

	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(verdict != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
	value = g_task_propagate_int(G_TASK(result), error);
	if (value < 0)
		return FALSE;
	*verdict = (SflEgressVerdict)value;
	return TRUE;
}

/**
 * sfl_egress_stop_waiting:
 * @self: a governor
 * @cancellable: the admissions' cancellable
 *
 * The caller is stopping: its admissions under @cancellable no longer wait for midnight;
 * a paused one (or one that would pause) completes with %SFL_EGRESS_PAUSED instead.
 */
void
sfl_egress_stop_waiting(SflEgress *self, GCancellable *cancellable)
{
	g_return_if_fail(SFL_IS_EGRESS(self));
	for (GList *l = self->waiters.head; l != NULL; l = l->next) {
		SflEgressWaiter *w = l->data;

		if (w->cancellable != cancellable)
			continue;
		w->no_pause = TRUE;
		if (w->paused)
			sfl_egress_waiter_arm(w, 0);
	}
}

/**
 * sfl_egress_dup_persisted:
 * @self: a governor
 *
 * Returns: (transfer full) (nullable): `{"date": "YYYY-MM-DD", "bytes": N}` for today, or
 * %NULL without a daily budget
 */
gchar *
sfl_egress_dup_persisted(SflEgress *self)
{
	gchar date[11];

	g_return_val_if_fail(SFL_IS_EGRESS(self), NULL);
	if (self->config.daily_byte_budget <= 0)
		return NULL;
	sfl_egress_roll(self);
	sfl_egress_format_day(self->day, date);
	/* the original's json.dumps: insertion order, ", " and ": " separators */
	return g_strdup_printf("{\"date\": \"%s\", \"bytes\": %" G_GUINT64_FORMAT "}", date,
			       self->used);
}

/**
 * sfl_egress_record:
 * @self: a governor
 * @bytes: line bytes Loki just accepted
 *
 * Counts @bytes against today's budget.
 *
 * Returns: (transfer full) (nullable): the value to persist under SFL_EGRESS_BUDGET_KEY, or
 * %NULL without a daily budget
 */
gchar *
sfl_egress_record(SflEgress *self, guint64 bytes)
{
	guint64 budget;

	g_return_val_if_fail(SFL_IS_EGRESS(self), NULL);
	if (self->config.daily_byte_budget <= 0)
		return NULL;
	budget = (guint64)self->config.daily_byte_budget;
	sfl_egress_roll(self);
	self->used += bytes;
	sfl_egress_publish(self);
	if (self->high_logged_day != self->day &&
	    (gdouble)self->used >= (gdouble)budget * SFL_EGRESS_HIGH_WATER_PCT / 100) {
		self->high_logged_day = self->day;
		g_warning("egress: %" G_GUINT64_FORMAT
			  " of the daily byte budget of %" G_GUINT64_FORMAT
			  " bytes used today (at least %d %%)",
			  self->used, budget, SFL_EGRESS_HIGH_WATER_PCT);
	}
	return sfl_egress_dup_persisted(self);
}

/**
 * sfl_egress_is_paused:
 * @self: a governor
 *
 * Returns: %TRUE while a batch waits for midnight on the spent budget
 */
gboolean
sfl_egress_is_paused(SflEgress *self)
{
	g_return_val_if_fail(SFL_IS_EGRESS(self), FALSE);
	return self->n_paused > 0;
}

/**
 * sfl_egress_dup_degraded:
 * @self: a governor
 *
 * Returns: (transfer full) (nullable): the /readyz reason while paused (its first
 * reason, docs/operations/health.md), else %NULL
 */
gchar *
sfl_egress_dup_degraded(SflEgress *self)
{
	gchar until[11];

	g_return_val_if_fail(SFL_IS_EGRESS(self), NULL);
	if (self->n_paused == 0)
		return NULL;
	sfl_egress_format_day(sfl_egress_today(self) + 1, until);
	return g_strdup_printf("degraded: daily byte budget exhausted, pushes paused until %s",
			       until);
}

/**
 * sfl_egress_get_status:
 * @self: a governor
 * @status: (out caller-allocates): filled with a snapshot
 */
void
sfl_egress_get_status(SflEgress *self, SflEgressStatus *status)
{
	g_return_if_fail(SFL_IS_EGRESS(self));
	g_return_if_fail(status != NULL);
	memset(status, 0, sizeof(*status));
	if (self->config.daily_byte_budget > 0)
		sfl_egress_roll(self);
	status->budget_enabled = self->config.daily_byte_budget > 0;
	status->used_bytes = self->used;
	sfl_egress_format_day(self->day, status->date);
	status->paused = self->n_paused > 0;
}
