/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSfAuth"

#include "config.h"

#include "sfl-sf-auth.h"

#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-http.h"
#include "sfl-jwt.h"
#include "sfl-redact.h"

#define SFL_SF_AUTH_JWT_LIFETIME_SEC  180
#define SFL_SF_AUTH_REFRESH_SKEW_USEC (60 * G_USEC_PER_SEC)
#define SFL_SF_AUTH_TIMEOUT_MS	      (30 * 1000)
#define SFL_SF_AUTH_MAX_BODY	      (256 * 1024)
#define SFL_SF_AUTH_EXCERPT_MAX	      300
/*
 * How much of a body is redacted before the excerpt is cut from it: a redacted secret shrinks
 * to its marker and pulls later bytes into the excerpt, so the redaction must see far more than
 * the excerpt shows, or a secret cut at the edge would be shown half (a private key is ~1.7 KiB)
 */
#define SFL_SF_AUTH_EXCERPT_SCAN (64 * 1024)

typedef struct {
	GTask *task;
	GSource *cancel_source;
} SflSfAuthWaiter;

struct _SflSfAuth {
	GObject parent_instance;
	SflCurlLoop *loop;
	SflClock *clock;
	gint auth_mode;
	gchar *login_url;
	gchar *client_id;
	gchar *client_secret;
	gchar *username;
	gchar *config_org_id;
	SflJwtSigner *signer;
	gint64 token_ttl_usec;
	GRand *rand;

	SflSfToken *token;
	gint64 token_refresh_at; /* monotonic usec */
	guint64 generation;

	/* the one mint in flight, shared by every waiter */
	gboolean minting;
	guint mint_attempt;
	GSource *mint_retry;
	GCancellable *mint_cancellable;
	GPtrArray *waiters; /* SflSfAuthWaiter* */

	gchar *org_id; /* from userinfo, cached for the process */

	guint64 mints;
	guint64 mint_failures;
	SflSeries *m_refreshes; /* (nullable) */
	SflSeries *m_errors;
};

G_DEFINE_TYPE(SflSfAuth, sfl_sf_auth, G_TYPE_OBJECT)

/* --- tokens ---------------------------------------------------------------------------------- */

static SflSfToken *
sfl_sf_token_new(const gchar *access_token, const gchar *instance_url, guint64 generation)
{
	SflSfToken *token = g_new0(SflSfToken, 1);
	gsize len = strlen(instance_url);

	token->ref_count = 1;
	token->access_token = g_strdup(access_token);
	while (len > 0 && instance_url[len - 1] == '/')
		len--;
	token->instance_url = g_strndup(instance_url, len);
	token->generation = generation;
	return token;
}

/**
 * sfl_sf_token_ref:
 * @token: a token
 *
 * Returns: (transfer full): @token
 */
SflSfToken *
sfl_sf_token_ref(SflSfToken *token)
{
	g_return_val_if_fail(token != NULL, NULL);
	g_atomic_int_inc(&token->ref_count);
	return token;
}

void
sfl_sf_token_unref(SflSfToken *token)
{
	if (token == NULL || !g_atomic_int_dec_and_test(&token->ref_count))
		return;
	if (token->access_token != NULL)
		memset(token->access_token, 0, strlen(token->access_token));
	g_free(token->access_token);
	g_free(token->instance_url);
	g_free(token);
}

/* --- shared helpers ----------------------------------------------------------------------------
 */

/**
 * sfl_sf_excerpt:
 * @data: (nullable): response bytes
 * @len: their length
 *
 * Returns: (transfer full): valid UTF-8, secrets masked, at most a few hundred bytes, one line
 */
gchar *
sfl_sf_excerpt(const gchar *data, gsize len)
{
	g_autofree gchar *valid = NULL;
	g_autofree gchar *redacted = NULL;
	gsize cut = 0;

	valid = g_utf8_make_valid(data != NULL ? data : "",
				  data != NULL ? (gssize)MIN(len, SFL_SF_AUTH_EXCERPT_SCAN) : 0);
	redacted = sfl_redact(valid);
	for (gchar *p = redacted; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	}
	cut = strlen(redacted);
	if (cut > SFL_SF_AUTH_EXCERPT_MAX) {
		cut = SFL_SF_AUTH_EXCERPT_MAX;
		while (cut > 0 && (redacted[cut] & 0xC0) == 0x80)
			cut--;
		redacted[cut] = '\0';
	}
	return g_strdup(g_strstrip(redacted));
}

/**
 * sfl_sf_backoff_usec:
 * @rand: the random source
 * @attempt: the attempt that failed, from 1
 *
 * Returns: capped exponential backoff with jitter: 0.5 s, 1 s, 2 s, ... up to 10 s, each
 *   drawn from its upper half
 */
gint64
sfl_sf_backoff_usec(GRand *rand, guint attempt)
{
	gint64 cap = G_USEC_PER_SEC / 2;

	for (guint i = 1; i < attempt && cap < 10 * G_USEC_PER_SEC; i++)
		cap *= 2;
	cap = MIN(cap, 10 * G_USEC_PER_SEC);
	return cap / 2 + (gint64)g_rand_double_range(rand, 0, (gdouble)(cap / 2));
}

static gchar *
sfl_sf_auth_mask(SflSfAuth *self, const gchar *text, const gchar *assertion)
{
	gchar *out = g_strdup(text);
	const gchar *secrets[] = { assertion, self->client_secret };

	for (guint i = 0; i < G_N_ELEMENTS(secrets); i++) {
		g_autoptr(GString) s = NULL;

		if (secrets[i] == NULL || strlen(secrets[i]) < 4 || strstr(out, secrets[i]) == NULL)
			continue;
		s = g_string_new(out);
		g_free(out);
		g_string_replace(s, secrets[i], SFL_REDACTED, 0);
		out = g_string_free(g_steal_pointer(&s), FALSE);
	}
	return out;
}

/* --- mint ------------------------------------------------------------------------------------ */

static gboolean
sfl_sf_auth_token_valid(SflSfAuth *self)
{
	return self->token != NULL &&
	       sfl_clock_monotonic_usec(self->clock) < self->token_refresh_at;
}

static void
sfl_sf_auth_waiter_free(SflSfAuthWaiter *waiter)
{
	sfl_clear_source(&waiter->cancel_source);
	g_clear_object(&waiter->task);
	g_free(waiter);
}

static gboolean
sfl_sf_auth_waiter_cancelled_cb(GCancellable *cancellable, gpointer user_data)
{
	SflSfAuthWaiter *waiter = user_data;
	g_autoptr(GTask) task = g_object_ref(waiter->task);
	SflSfAuth *self = g_task_get_source_object(task);

	(void)cancellable;
	/* the mint goes on for the others; only this caller stops waiting */
	g_ptr_array_remove(self->waiters, waiter);
	g_task_return_error_if_cancelled(task);
	return G_SOURCE_REMOVE;
}

static void
sfl_sf_auth_mint_complete(SflSfAuth *self, const GError *error)
{
	g_autoptr(GPtrArray) waiters = g_steal_pointer(&self->waiters);

	self->waiters = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_sf_auth_waiter_free);
	self->minting = FALSE;
	g_clear_object(&self->mint_cancellable);
	if (error != NULL) {
		self->mint_failures++;
		sfl_series_inc(self->m_errors);
	}
	for (guint i = 0; i < waiters->len; i++) {
		SflSfAuthWaiter *waiter = g_ptr_array_index(waiters, i);

		sfl_clear_source(&waiter->cancel_source);
		if (error != NULL)
			g_task_return_error(waiter->task, g_error_copy(error));
		else
			g_task_return_pointer(waiter->task, sfl_sf_token_ref(self->token),
					      (GDestroyNotify)sfl_sf_token_unref);
	}
}

static void sfl_sf_auth_mint_attempt(SflSfAuth *self);

static void
sfl_sf_auth_mint_retry_cb(gpointer user_data)
{
	sfl_sf_auth_mint_attempt(user_data);
}

/* a 5xx or a transport error: another attempt after a backoff, or the final error */
static void
sfl_sf_auth_mint_retry_or_fail(SflSfAuth *self, GError *error)
{
	g_autoptr(GError) owned = error;

	if (self->mint_attempt >= SFL_SF_AUTH_ATTEMPTS) {
		g_prefix_error(&owned, "after %u attempts: ", self->mint_attempt);
		g_debug("%s", owned->message);
		sfl_sf_auth_mint_complete(self, owned);
		return;
	}
	/* the first failure of a mint is worth a WARNING; its retries are not */
	if (self->mint_attempt == 1)
		g_warning("%s; retrying with backoff (%u attempts in all)", owned->message,
			  SFL_SF_AUTH_ATTEMPTS);
	else
		g_debug("%s; retrying", owned->message);
	sfl_clock_once(self->clock, &self->mint_retry,
		       sfl_sf_backoff_usec(self->rand, self->mint_attempt),
		       "[sf2loki] token mint retry", sfl_sf_auth_mint_retry_cb, self,
		       g_main_context_get_thread_default());
}

/* "HTTP 400 invalid_grant: <description>", never quoting the assertion or the secret */
static GError *
sfl_sf_auth_token_error(SflSfAuth *self, guint status, GBytes *body, const gchar *assertion)
{
	g_autoptr(json_t) doc = NULL;
	g_autofree gchar *detail = NULL;
	g_autofree gchar *masked = NULL;
	g_autofree gchar *excerpt = NULL;
	gsize len = 0;
	const gchar *data = g_bytes_get_data(body, &len);
	const gchar *code = NULL;
	const gchar *description = NULL;
	GError *error = NULL;

	doc = json_loadb(data != NULL ? data : "", len, 0, NULL);
	code = json_string_value(json_object_get(doc, "error"));
	description = json_string_value(json_object_get(doc, "error_description"));
	if (code != NULL)
		detail = g_strdup_printf("%s: %s", code, description != NULL ? description : "");
	else if (len > 0)
		detail = g_strndup(data, MIN(len, 4096));
	else
		detail = g_strdup("(empty body)");
	masked = sfl_sf_auth_mask(self, detail, assertion);
	excerpt = sfl_sf_excerpt(masked, strlen(masked));
	error = g_error_new(SFL_ERROR,
			    sfl_http_status_class(status) == SFL_HTTP_CLASS_SERVER
				    ? SFL_ERROR_TRANSIENT
				    : SFL_ERROR_AUTH,
			    "Salesforce token endpoint: HTTP %u %s", status, excerpt);
	/* the OAuth error code is what callers decide on (the doctor's invalid_grant hint) */
	sfl_error_set_http_status(error, status);
	sfl_error_set_peer_code(error, code);
	return error;
}

typedef struct {
	SflSfAuth *self;
	gchar *assertion; /* for masking an echo in the error body */
} SflSfAuthMintCall;

static void
sfl_sf_auth_mint_call_free(SflSfAuthMintCall *call)
{
	g_clear_object(&call->self);
	if (call->assertion != NULL)
		memset(call->assertion, 0, strlen(call->assertion));
	g_free(call->assertion);
	g_free(call);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflSfAuthMintCall, sfl_sf_auth_mint_call_free)

static void
sfl_sf_auth_mint_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflSfAuthMintCall) call = user_data;
	SflSfAuth *self = call->self;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(json_t) doc = NULL;
	const gchar *access_token = NULL;
	const gchar *instance_url = NULL;
	GBytes *body = NULL;
	const gchar *data = NULL;
	gsize len = 0;
	guint status = 0;

	(void)source;
	response = sfl_http_request_finish(result, &error);
	if (response == NULL) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			sfl_sf_auth_mint_complete(self, error);
			return;
		}
		g_prefix_error(&error, "Salesforce token endpoint %s: ", self->login_url);
		sfl_sf_auth_mint_retry_or_fail(self, g_steal_pointer(&error));
		return;
	}
	status = sfl_http_response_get_status(response);
	body = sfl_http_response_get_body(response);
	if (sfl_http_status_class(status) == SFL_HTTP_CLASS_SERVER) {
		sfl_sf_auth_mint_retry_or_fail(
			self, sfl_sf_auth_token_error(self, status, body, call->assertion));
		return;
	}
	if (sfl_http_status_class(status) != SFL_HTTP_CLASS_SUCCESS) {
		g_autoptr(GError) fatal =
			sfl_sf_auth_token_error(self, status, body, call->assertion);

		g_debug("%s", fatal->message);
		sfl_sf_auth_mint_complete(self, fatal);
		return;
	}
	data = g_bytes_get_data(body, &len);
	doc = json_loadb(data != NULL ? data : "", len, 0, NULL);
	access_token = json_string_value(json_object_get(doc, "access_token"));
	instance_url = json_string_value(json_object_get(doc, "instance_url"));
	/* never quote this body: it may hold a token */
	if (access_token == NULL || access_token[0] == '\0' || instance_url == NULL ||
	    (!g_str_has_prefix(instance_url, "https://") &&
	     !g_str_has_prefix(instance_url, "http://"))) {
		g_autoptr(GError) bad = g_error_new(
			SFL_ERROR, SFL_ERROR_TRANSIENT,
			"Salesforce token endpoint: HTTP %u without %s", status,
			!json_is_object(doc)			 ? "a JSON object body"
			: access_token == NULL || !*access_token ? "an access_token"
								 : "an http(s) instance_url");

		sfl_sf_auth_mint_retry_or_fail(self, g_steal_pointer(&bad));
		return;
	}
	g_clear_pointer(&self->token, sfl_sf_token_unref);
	self->token = sfl_sf_token_new(access_token, instance_url, ++self->generation);
	self->token_refresh_at = sfl_clock_monotonic_usec(self->clock) + self->token_ttl_usec -
				 SFL_SF_AUTH_REFRESH_SKEW_USEC;
	self->mints++;
	sfl_series_inc(self->m_refreshes);
	g_debug("minted Salesforce token #%" G_GUINT64_FORMAT " for %s", self->generation,
		self->token->instance_url);
	sfl_sf_auth_mint_complete(self, NULL);
}

static GBytes *
sfl_sf_auth_form(SflSfAuth *self, gchar **assertion, GError **error)
{
	g_autoptr(GString) form = g_string_new(NULL);

	if (self->auth_mode == SFL_SF_AUTH_CLIENT_CREDENTIALS) {
		g_autofree gchar *id = g_uri_escape_string(self->client_id, NULL, FALSE);
		g_autofree gchar *secret = g_uri_escape_string(self->client_secret, NULL, FALSE);

		g_string_append_printf(
			form, "grant_type=client_credentials&client_id=%s&client_secret=%s", id,
			secret);
		memset(secret, 0, strlen(secret));
	} else {
		gint64 exp = sfl_clock_wall_usec(self->clock) / G_USEC_PER_SEC +
			     SFL_SF_AUTH_JWT_LIFETIME_SEC;

		*assertion = sfl_jwt_signer_sign(self->signer, self->client_id, self->username,
						 self->login_url, exp, error);
		if (*assertion == NULL)
			return NULL;
		/* base64url and dots need no escaping in a form value */
		g_string_append_printf(
			form,
			"grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-bearer"
			"&assertion=%s",
			*assertion);
	}
	return g_string_free_to_bytes(g_steal_pointer(&form));
}

static void
sfl_sf_auth_mint_attempt(SflSfAuth *self)
{
	static const gchar *const headers[] = { "Content-Type: application/x-www-form-urlencoded",
						"Accept: application/json", NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) form = NULL;
	g_autofree gchar *url = g_strconcat(self->login_url, "/services/oauth2/token", NULL);
	SflSfAuthMintCall *call = g_new0(SflSfAuthMintCall, 1);

	call->self = g_object_ref(self);
	self->mint_attempt++;
	form = sfl_sf_auth_form(self, &call->assertion, &error);
	if (form == NULL) {
		sfl_sf_auth_mint_call_free(call);
		sfl_sf_auth_mint_complete(self, error);
		return;
	}
	sfl_http_request_bounded_async(self->loop, "POST", url, headers, form,
				       SFL_SF_AUTH_TIMEOUT_MS, SFL_SF_AUTH_MAX_BODY,
				       self->mint_cancellable, sfl_sf_auth_mint_done_cb, call);
}

static void
sfl_sf_auth_mint_start(SflSfAuth *self)
{
	if (self->minting)
		return;
	self->minting = TRUE;
	self->mint_attempt = 0;
	self->mint_cancellable = g_cancellable_new();
	sfl_sf_auth_mint_attempt(self);
}

/**
 * sfl_sf_auth_get_token_async:
 * @self: the org's token provider
 * @cancellable: (nullable): stops this caller's wait (a shared mint goes on)
 * @callback: completion
 * @user_data: for @callback
 *
 * A cached token if it is still valid, else the result of the one mint in flight.
 */
void
sfl_sf_auth_get_token_async(SflSfAuth *self, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	SflSfAuthWaiter *waiter = NULL;

	g_return_if_fail(SFL_IS_SF_AUTH(self));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_sf_auth_get_token_async);
	if (g_task_return_error_if_cancelled(task))
		return;
	if (sfl_sf_auth_token_valid(self)) {
		g_task_return_pointer(task, sfl_sf_token_ref(self->token),
				      (GDestroyNotify)sfl_sf_token_unref);
		return;
	}
	waiter = g_new0(SflSfAuthWaiter, 1);
	waiter->task = g_steal_pointer(&task);
	if (cancellable != NULL) {
		waiter->cancel_source = g_cancellable_source_new(cancellable);
		g_source_set_callback(waiter->cancel_source,
				      (GSourceFunc)(void (*)(void))sfl_sf_auth_waiter_cancelled_cb,
				      waiter, NULL);
		g_source_attach(waiter->cancel_source, g_main_context_get_thread_default());
	}
	g_ptr_array_add(self->waiters, waiter);
	sfl_sf_auth_mint_start(self);
}

/**
 * sfl_sf_auth_get_token_finish:
 * @self: the org's token provider
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the token; SFL_ERROR_AUTH when Salesforce refused the
 *   credentials, SFL_ERROR_TRANSIENT when it could not be reached
 */
SflSfToken *
sfl_sf_auth_get_token_finish(SflSfAuth *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_sf_auth_invalidate:
 * @self: the org's token provider
 * @rejected: the token Salesforce refused
 *
 * Drops the cached token when it is @rejected; a newer one stays.
 */
void
sfl_sf_auth_invalidate(SflSfAuth *self, const SflSfToken *rejected)
{
	g_return_if_fail(SFL_IS_SF_AUTH(self));
	g_return_if_fail(rejected != NULL);

	if (self->token == NULL || self->token->generation != rejected->generation)
		return;
	g_debug("Salesforce token #%" G_GUINT64_FORMAT " was rejected; dropping it",
		rejected->generation);
	g_clear_pointer(&self->token, sfl_sf_token_unref);
}

/**
 * sfl_sf_auth_has_token:
 * @self: the org's token provider
 *
 * Returns: %TRUE when a token is cached and not due for refresh
 */
gboolean
sfl_sf_auth_has_token(SflSfAuth *self)
{
	g_return_val_if_fail(SFL_IS_SF_AUTH(self), FALSE);
	return sfl_sf_auth_token_valid(self);
}

/* --- org id ---------------------------------------------------------------------------------- */

typedef struct {
	SflSfToken *token;
	guint attempt;
	gboolean reminted;
	GSource *retry;
	GSource *cancel_source;
} SflSfAuthOrgCall;

static void
sfl_sf_auth_org_call_free(SflSfAuthOrgCall *call)
{
	sfl_clear_source(&call->retry);
	sfl_clear_source(&call->cancel_source);
	g_clear_pointer(&call->token, sfl_sf_token_unref);
	g_free(call);
}

static void sfl_sf_auth_org_fetch(GTask *task);

static void
sfl_sf_auth_org_token_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflSfAuthOrgCall *call = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;

	g_clear_pointer(&call->token, sfl_sf_token_unref);
	call->token = sfl_sf_auth_get_token_finish(SFL_SF_AUTH(source), result, &error);
	if (call->token == NULL) {
		g_prefix_error(&error, "Salesforce userinfo: ");
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	sfl_sf_auth_org_fetch(g_steal_pointer(&task));
}

static gboolean
sfl_sf_auth_org_retry_cb(gpointer user_data)
{
	GTask *task = G_TASK(user_data);
	SflSfAuthOrgCall *call = g_task_get_task_data(task);

	sfl_clear_source(&call->retry);
	sfl_clear_source(&call->cancel_source);
	/* the source held the task reference */
	sfl_sf_auth_org_fetch(task);
	return G_SOURCE_REMOVE;
}

static gboolean
sfl_sf_auth_org_cancelled_cb(GCancellable *cancellable, gpointer user_data)
{
	GTask *task = G_TASK(user_data);
	SflSfAuthOrgCall *call = g_task_get_task_data(task);

	(void)cancellable;
	sfl_clear_source(&call->retry);
	sfl_clear_source(&call->cancel_source);
	g_task_return_error_if_cancelled(task);
	g_object_unref(task);
	return G_SOURCE_REMOVE;
}

static void
sfl_sf_auth_org_retry_or_fail(GTask *owned_task, GError *error)
{
	g_autoptr(GTask) task = owned_task;
	g_autoptr(GError) owned = error;
	SflSfAuth *self = g_task_get_source_object(task);
	SflSfAuthOrgCall *call = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);

	if (call->attempt >= SFL_SF_AUTH_ATTEMPTS) {
		g_prefix_error(&owned, "after %u attempts: ", call->attempt);
		g_task_return_error(task, g_steal_pointer(&owned));
		return;
	}
	if (call->attempt == 1)
		g_warning("%s; retrying with backoff (%u attempts in all)", owned->message,
			  SFL_SF_AUTH_ATTEMPTS);
	else
		g_debug("%s; retrying", owned->message);
	call->retry = sfl_clock_timeout_source_new(self->clock,
						   sfl_sf_backoff_usec(self->rand, call->attempt));
	g_source_set_name(call->retry, "[sf2loki] userinfo retry");
	/* exactly one of the two sources runs; it owns the task reference */
	g_source_set_callback(call->retry, sfl_sf_auth_org_retry_cb, task, NULL);
	g_source_attach(call->retry, g_main_context_get_thread_default());
	if (cancellable != NULL) {
		call->cancel_source = g_cancellable_source_new(cancellable);
		g_source_set_callback(call->cancel_source,
				      (GSourceFunc)(void (*)(void))sfl_sf_auth_org_cancelled_cb,
				      task, NULL);
		g_source_attach(call->cancel_source, g_main_context_get_thread_default());
	}
	(void)g_steal_pointer(&task);
}

static void
sfl_sf_auth_org_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflSfAuth *self = g_task_get_source_object(task);
	SflSfAuthOrgCall *call = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(json_t) doc = NULL;
	const gchar *org_id = NULL;
	GBytes *body = NULL;
	const gchar *data = NULL;
	gsize len = 0;
	guint status = 0;

	(void)source;
	response = sfl_http_request_finish(result, &error);
	if (response == NULL) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			g_task_return_error(task, g_steal_pointer(&error));
			return;
		}
		g_prefix_error(&error, "Salesforce userinfo: ");
		sfl_sf_auth_org_retry_or_fail(g_steal_pointer(&task), g_steal_pointer(&error));
		return;
	}
	status = sfl_http_response_get_status(response);
	body = sfl_http_response_get_body(response);
	data = g_bytes_get_data(body, &len);
	if (status == 401 && !call->reminted) {
		/* SFL-0025: a dead token must not keep failing until its local expiry */
		call->reminted = TRUE;
		sfl_sf_auth_invalidate(self, call->token);
		sfl_sf_auth_get_token_async(self, cancellable, sfl_sf_auth_org_token_cb,
					    g_steal_pointer(&task));
		return;
	}
	if (sfl_http_status_class(status) != SFL_HTTP_CLASS_SUCCESS) {
		g_autofree gchar *excerpt = sfl_sf_excerpt(data, len);
		g_autoptr(GError) failed = g_error_new(
			SFL_ERROR,
			sfl_http_status_class(status) == SFL_HTTP_CLASS_SERVER ? SFL_ERROR_TRANSIENT
									       : SFL_ERROR_AUTH,
			"Salesforce userinfo: HTTP %u %s", status, excerpt);

		if (sfl_http_status_class(status) == SFL_HTTP_CLASS_SERVER) {
			sfl_sf_auth_org_retry_or_fail(g_steal_pointer(&task),
						      g_steal_pointer(&failed));
			return;
		}
		g_task_return_error(task, g_steal_pointer(&failed));
		return;
	}
	doc = json_loadb(data != NULL ? data : "", len, 0, NULL);
	org_id = json_string_value(json_object_get(doc, "organization_id"));
	if (org_id == NULL || org_id[0] == '\0') {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"Salesforce userinfo: HTTP %u without organization_id",
					status);
		return;
	}
	if (self->org_id == NULL)
		self->org_id = g_strdup(org_id);
	g_task_return_pointer(task, g_strdup(org_id), g_free);
}

static void
sfl_sf_auth_org_fetch(GTask *owned_task)
{
	g_autoptr(GTask) task = owned_task;
	SflSfAuth *self = g_task_get_source_object(task);
	SflSfAuthOrgCall *call = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);
	g_autofree gchar *url = NULL;
	g_autofree gchar *bearer = NULL;
	const gchar *headers[3] = { NULL };

	if (g_task_return_error_if_cancelled(task))
		return;
	if (call->token == NULL) {
		sfl_sf_auth_get_token_async(self, cancellable, sfl_sf_auth_org_token_cb,
					    g_steal_pointer(&task));
		return;
	}
	call->attempt++;
	url = g_strconcat(call->token->instance_url, "/services/oauth2/userinfo", NULL);
	bearer = g_strconcat("Authorization: Bearer ", call->token->access_token, NULL);
	headers[0] = bearer;
	headers[1] = "Accept: application/json";
	sfl_http_request_bounded_async(self->loop, "GET", url, headers, NULL,
				       SFL_SF_AUTH_TIMEOUT_MS, SFL_SF_AUTH_MAX_BODY, cancellable,
				       sfl_sf_auth_org_done_cb, g_steal_pointer(&task));
}

/**
 * sfl_sf_auth_get_org_id_async:
 * @self: the org's token provider
 * @cancellable: (nullable): stops the lookup
 * @callback: completion
 * @user_data: for @callback
 *
 * salesforce.org_id when configured, else the userinfo answer (cached after success).
 */
void
sfl_sf_auth_get_org_id_async(SflSfAuth *self, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(SFL_IS_SF_AUTH(self));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_sf_auth_get_org_id_async);
	if (self->config_org_id != NULL) {
		g_task_return_pointer(task, g_strdup(self->config_org_id), g_free);
		return;
	}
	if (self->org_id != NULL) {
		g_task_return_pointer(task, g_strdup(self->org_id), g_free);
		return;
	}
	g_task_set_task_data(task, g_new0(SflSfAuthOrgCall, 1),
			     (GDestroyNotify)sfl_sf_auth_org_call_free);
	sfl_sf_auth_org_fetch(g_steal_pointer(&task));
}

/**
 * sfl_sf_auth_get_org_id_finish:
 * @self: the org's token provider
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the org id
 */
gchar *
sfl_sf_auth_get_org_id_finish(SflSfAuth *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/* --- object ---------------------------------------------------------------------------------- */

guint64
sfl_sf_auth_get_mints(SflSfAuth *self)
{
	g_return_val_if_fail(SFL_IS_SF_AUTH(self), 0);
	return self->mints;
}

guint64
sfl_sf_auth_get_mint_failures(SflSfAuth *self)
{
	g_return_val_if_fail(SFL_IS_SF_AUTH(self), 0);
	return self->mint_failures;
}

/**
 * sfl_sf_auth_get_clock:
 * @self: the org's token provider
 *
 * Returns: (transfer none): the clock it was made with
 */
SflClock *
sfl_sf_auth_get_clock(SflSfAuth *self)
{
	g_return_val_if_fail(SFL_IS_SF_AUTH(self), NULL);
	return self->clock;
}

/**
 * sfl_sf_auth_get_loop:
 * @self: the org's token provider
 *
 * Returns: (transfer none): the curl loop it was made with
 */
SflCurlLoop *
sfl_sf_auth_get_loop(SflSfAuth *self)
{
	g_return_val_if_fail(SFL_IS_SF_AUTH(self), NULL);
	return self->loop;
}

/**
 * sfl_sf_auth_is_minting:
 * @self: the org's token provider
 *
 * Returns: %TRUE while a mint (request or backoff) is in flight
 */
gboolean
sfl_sf_auth_is_minting(SflSfAuth *self)
{
	g_return_val_if_fail(SFL_IS_SF_AUTH(self), FALSE);
	return self->minting;
}

static void
sfl_sf_auth_dispose(GObject *object)
{
	SflSfAuth *self = SFL_SF_AUTH(object);

	/* waiters and mint calls hold references, so nothing is in flight here */
	sfl_clear_source(&self->mint_retry);
	if (self->mint_cancellable != NULL)
		g_cancellable_cancel(self->mint_cancellable);
	g_clear_object(&self->mint_cancellable);
	g_clear_object(&self->loop);
	G_OBJECT_CLASS(sfl_sf_auth_parent_class)->dispose(object);
}

static void
sfl_sf_auth_finalize(GObject *object)
{
	SflSfAuth *self = SFL_SF_AUTH(object);

	g_clear_pointer(&self->token, sfl_sf_token_unref);
	g_clear_pointer(&self->waiters, g_ptr_array_unref);
	g_clear_pointer(&self->signer, sfl_jwt_signer_free);
	g_clear_pointer(&self->rand, g_rand_free);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_free(self->login_url);
	g_free(self->client_id);
	if (self->client_secret != NULL)
		memset(self->client_secret, 0, strlen(self->client_secret));
	g_free(self->client_secret);
	g_free(self->username);
	g_free(self->config_org_id);
	g_free(self->org_id);
	G_OBJECT_CLASS(sfl_sf_auth_parent_class)->finalize(object);
}

static void
sfl_sf_auth_class_init(SflSfAuthClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = sfl_sf_auth_dispose;
	object_class->finalize = sfl_sf_auth_finalize;
}

static void
sfl_sf_auth_init(SflSfAuth *self)
{
	self->waiters = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_sf_auth_waiter_free);
	self->rand = g_rand_new();
}

/**
 * sfl_sf_auth_new:
 * @loop: the curl loop
 * @config: the org's salesforce section, validated (login_url derived)
 * @clock: the clock for token lifetimes, JWT expiry and retry backoff
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the provider; SFL_ERROR_INVALID_CONFIG when the
 *   credentials are incomplete or the key is unusable
 */
SflSfAuth *
sfl_sf_auth_new(SflCurlLoop *loop, const SflSalesforceConfig *config, SflClock *clock,
		GError **error)
{
	g_autoptr(SflSfAuth) self = NULL;
	const gchar *login_url = NULL;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(loop), NULL);
	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(clock != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	login_url = config->login_url;
	if (login_url == NULL ||
	    (!g_str_has_prefix(login_url, "https://") && !g_str_has_prefix(login_url, "http://"))) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "salesforce.login_url: must be an http(s) URL");
		return NULL;
	}
	if (sfl_config_text_blank(config->client_id)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "salesforce.client_id: required");
		return NULL;
	}
	self = g_object_new(SFL_TYPE_SF_AUTH, NULL);
	self->loop = g_object_ref(loop);
	self->clock = sfl_clock_ref(clock);
	self->auth_mode = config->auth_mode;
	self->login_url = g_strdup(login_url);
	{
		gsize len = strlen(self->login_url);

		while (len > 0 && self->login_url[len - 1] == '/')
			self->login_url[--len] = '\0';
	}
	self->client_id = g_strdup(config->client_id);
	self->token_ttl_usec =
		config->token_ttl > 0 ? config->token_ttl : (gint64)3600 * G_USEC_PER_SEC;
	if (self->token_ttl_usec <= SFL_SF_AUTH_REFRESH_SKEW_USEC) {
		/* SFL-0053: the config schema enforces 2m; keep a direct caller safe too */
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "salesforce.token_ttl: must be more than 60s (tokens are refreshed "
			    "60s before it ends)");
		return NULL;
	}
	if (!sfl_config_text_blank(config->org_id))
		self->config_org_id = g_strstrip(g_strdup(config->org_id));
	if (config->auth_mode == SFL_SF_AUTH_CLIENT_CREDENTIALS) {
		if (sfl_config_text_blank(config->client_secret)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "salesforce.client_secret: required for auth_mode "
				    "client_credentials");
			return NULL;
		}
		self->client_secret = g_strdup(config->client_secret);
		return g_steal_pointer(&self);
	}
	if (sfl_config_text_blank(config->username)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "salesforce.username: required for auth_mode jwt_bearer");
		return NULL;
	}
	self->username = g_strdup(config->username);
	if (!sfl_config_text_blank(config->private_key)) {
		self->signer = sfl_jwt_signer_new_from_pem(config->private_key, -1, error);
		if (self->signer == NULL) {
			g_prefix_error(error, "salesforce.private_key: ");
			return NULL;
		}
	} else if (!sfl_config_text_blank(config->private_key_file)) {
		self->signer = sfl_jwt_signer_new_from_file(config->private_key_file, error);
		if (self->signer == NULL) {
			g_prefix_error(error, "salesforce.private_key_file: ");
			return NULL;
		}
	} else {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "salesforce.private_key_file: required for auth_mode jwt_bearer");
		return NULL;
	}
	return g_steal_pointer(&self);
}

/**
 * sfl_sf_auth_set_metrics:
 * @self: the provider
 * @metrics: the registry
 * @org: (nullable): the org's name in multi-org mode
 *
 * Records `sf2loki_auth_refreshes` and `sf2loki_auth_errors` (with `org` in multi-org mode).
 */
void
sfl_sf_auth_set_metrics(SflSfAuth *self, SflMetrics *metrics, const gchar *org)
{
	const gchar *names[] = { org != NULL ? "org" : NULL, NULL };
	const gchar *values[] = { org, NULL };

	g_return_if_fail(SFL_IS_SF_AUTH(self));
	self->m_refreshes =
		sfl_metric_family_series(sfl_metrics_counter(metrics, "sf2loki_auth_refreshes",
							     "Salesforce tokens minted.", names),
					 org != NULL ? values : NULL);
	self->m_errors = sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_auth_errors",
				    "Salesforce token mints that failed.", names),
		org != NULL ? values : NULL);
}
